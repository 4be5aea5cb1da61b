"""Chat model access: the OpenAI-compatible client and the managed local model."""
