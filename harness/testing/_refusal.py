"""SDK clients that surface the network guard's refusal instead of hiding it.

The ``openai`` SDK turns any transport failure into ``APIConnectionError: Connection
error.``; the guard's ``NetworkRefused`` (which says which test, which host and what to
do) ends up many frames down the chained causes. The plugin's fixture clients are these
subclasses: when a request fails because the guard refused it, they raise the
``NetworkRefused`` itself; every other connection error is left as it was.
"""

from __future__ import annotations

from typing import Any

import openai

from harness.testing._network import refusal_in

__all__ = ["RefusalSurfacingAsyncOpenAI", "RefusalSurfacingOpenAI"]


class RefusalSurfacingOpenAI(openai.OpenAI):
    """``openai.OpenAI`` whose requests raise the guard's ``NetworkRefused`` when refused."""

    def request(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return super().request(*args, **kwargs)
        except openai.APIConnectionError as error:
            refused = refusal_in(error)
            if refused is None:
                raise
            raise refused.with_traceback(None) from None


class RefusalSurfacingAsyncOpenAI(openai.AsyncOpenAI):
    """The ``openai.AsyncOpenAI`` twin of ``RefusalSurfacingOpenAI``."""

    async def request(self, *args: Any, **kwargs: Any) -> Any:
        try:
            return await super().request(*args, **kwargs)
        except openai.APIConnectionError as error:
            refused = refusal_in(error)
            if refused is None:
                raise
            raise refused.with_traceback(None) from None
