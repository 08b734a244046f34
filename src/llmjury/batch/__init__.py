"""Batch files: the request lines llmjury writes and the answer lines it reads back, for OpenAI's
Batch API (the JSONL format `vllm run-batch` also reads and writes) and Gemini's batch mode."""
