# The native module (src/lib.rs). Hosts use the `ctxgate` package, which
# checks arguments and wraps these results; these are its types.
from os import PathLike
from typing import Any, Sequence

class Gate:
    def __init__(
        self,
        policy: str | PathLike[str] | Sequence[str | PathLike[str]] | None = None,
        *,
        max_input_bytes: int | None = None,
        max_elements: int | None = None,
        max_depth: int | None = None,
        max_content_bytes: int | None = None,
        max_projections: int | None = None,
    ) -> None: ...
    @property
    def policy_hash(self) -> str: ...
    def trim(
        self,
        answer: bytes | str | dict[str, Any],
        action: str,
        target: str | None,
        max_tokens: int | None,
        max_bytes: int | None,
        format: str,
        timeout: float | None,
    ) -> tuple[str, Report]: ...
    def check(self, answer: bytes | str | dict[str, Any]) -> list[dict[str, Any]]: ...

class Report:
    """A trim's report, kept in Rust until read."""
    def json(self) -> str: ...

IMPORT_FORMATS: tuple[str, ...]

def import_tree(format: str, text: str | bytes) -> dict[str, Any]: ...

#: The exception class (in `ctxgate`) of each of the library's error kinds,
#: from its one table of kinds (`ctxgate::wire::codes`).
ERROR_CLASSES: tuple[str, ...]
