"""Integrations of pi-session with agent frameworks (**beyond pi**).

- :mod:`pi_session.integrations.openai_agents`: a session for the OpenAI
  Agents SDK (``pip install 'pi-session[agents]'``).
- :mod:`pi_session.integrations.pydantic_ai`: a Pydantic AI conversation
  store, and pi-session's compaction as a Pydantic AI capability
  (``pip install 'pi-session[pydantic-ai]'``).
- :mod:`pi_session.integrations.session_ids`: the pi session id of a
  framework's own id.
"""
