"""Whole-model LLM workflows: a static KV cache, greedy generation and whole-model estimates."""
