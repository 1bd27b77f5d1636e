"""Sessions rendered for people: terminal text and rows, Markdown and HTML export."""
