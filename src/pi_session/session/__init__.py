"""A session as pi models it, in pure functions over its entries: the tree,
the context at a leaf, token estimates, navigation, statistics and settings."""
