"""Adapters over the official openai SDK: Chat Completions and Responses."""
