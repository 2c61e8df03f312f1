"""Command-line tools: `ktir-opt`."""
