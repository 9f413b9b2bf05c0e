"""The resident search engines: the search loops, one kernel per rule, over a problem adapter."""
