"""The ReAct loop: prompts, tool-call protocols, context budget."""
