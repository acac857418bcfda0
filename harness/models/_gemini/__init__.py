"""The Gemini adapter over the official ``google-genai`` SDK."""
