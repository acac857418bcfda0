"""The Anthropic Messages codec and the adapter over the official anthropic SDK."""
