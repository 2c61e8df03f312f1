"""Layout planning: per-op stick rules, the layout search, the layout plan and its legality check."""
