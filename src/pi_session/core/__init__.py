"""The basics every layer of pi-session uses: JSON with JavaScript's rules, text,
ids, timestamps and paths as pi reads them."""
