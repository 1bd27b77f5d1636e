"""Integrations of pi-session with agent frameworks (**beyond pi**).

- :mod:`pi_session.integrations.openai_agents`: a session for the OpenAI
  Agents SDK (``pip install 'pi-session[agents]'``).
"""
