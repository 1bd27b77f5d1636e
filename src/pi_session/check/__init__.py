"""Checking and repairing session files (**beyond pi**)."""
