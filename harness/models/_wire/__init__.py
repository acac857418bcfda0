"""The OpenAI wire fake: an ASGI-free app, an httpx2 transport and a loopback server."""
