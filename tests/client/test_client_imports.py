"""The client distribution needs only grpcio and protobuf: no server code, no optional package required."""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import diagnosis

CLIENT = Path(__file__).resolve().parents[2] / "client" / "diagnosis"
ALLOWED_ROOTS = {"grpc", "diagnosis"}
OPTIONAL = ("google.rpc",)


def hand_written_modules() -> list[Path]:
    return sorted(p for p in CLIENT.rglob("*.py") if "_pb2" not in p.name)


def imported_modules(tree: ast.AST) -> list[tuple[str, bool]]:
    """(module, guarded) for every import; guarded: inside ``try/except ImportError`` or ``suppress(ImportError)``."""
    found: list[tuple[str, bool]] = []

    def guards(node: ast.AST) -> bool:
        if isinstance(node, ast.Try):
            return any(
                isinstance(h.type, ast.Name) and h.type.id in {"ImportError", "ModuleNotFoundError"}
                for h in node.handlers
            )
        if isinstance(node, ast.With):
            return any("suppress(ImportError)" in ast.unparse(item.context_expr) for item in node.items)
        return False

    def visit(node: ast.AST, guarded: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                found.extend((alias.name, guarded) for alias in child.names)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    found.append(("diagnosis", guarded))
                else:
                    found.append((child.module or "", guarded))
            visit(child, guarded or guards(child))

    visit(tree, False)
    return found


def test_client_modules_import_only_stdlib_grpc_protobuf_and_guarded_google_rpc() -> None:
    modules = hand_written_modules()
    assert {p.name for p in modules} >= {"__init__.py", "_config.py", "_sync.py", "_async.py", "errors.py"}
    offenders: list[str] = []
    for path in modules:
        for name, guarded in imported_modules(ast.parse(path.read_text(encoding="utf-8"))):
            root = name.split(".")[0]
            if root in sys.stdlib_module_names or root in ALLOWED_ROOTS or name.startswith("google.protobuf"):
                continue
            if name.startswith(OPTIONAL) and guarded:
                continue
            offenders.append(f"{path.relative_to(CLIENT)}: {name}{' (unguarded)' if name.startswith(OPTIONAL) else ''}")
    assert offenders == []


def test_the_scan_would_catch_a_server_import() -> None:
    tree = ast.parse("import diagnosis_server\nfrom google.rpc import status_pb2\n")
    assert imported_modules(tree) == [("diagnosis_server", False), ("google.rpc", False)]
    guarded = ast.parse("try:\n    from google.rpc import x\nexcept ImportError:\n    pass\n")
    assert imported_modules(guarded) == [("google.rpc", True)]


def test_the_package_works_with_google_rpc_and_server_packages_unimportable(tmp_path: Path) -> None:
    """With googleapis-common-protos, grpc_status and the server blocked, the client imports and decodes details
    (an unknown detail type stays google.protobuf.Any)."""
    script = textwrap.dedent(
        """
        import sys
        BLOCKED = ("google.rpc", "grpc_status", "diagnosis_server", "pydantic", "structlog", "sqlalchemy")

        class Block:
            def find_spec(self, name, path=None, target=None):
                if name.startswith(BLOCKED):
                    raise ImportError(f"blocked: {name}")
                return None

        sys.meta_path.insert(0, Block())
        import diagnosis
        from diagnosis._status import decode_details
        from google.protobuf import any_pb2

        # A google.rpc.Status{code: 3, message: "m", details: [Any(type.googleapis.com/google.rpc.BadRequest)]}
        bad_request = b"\\x0a\\x05\\x0a\\x01q\\x12\\x00"  # BadRequest{field_violations: [{field: "q"}]}
        url = "type.googleapis.com/google.rpc.BadRequest"
        detail = any_pb2.Any(type_url=url, value=bad_request).SerializeToString()
        raw = b"\\x08\\x03\\x12\\x01m" + b"\\x1a" + bytes([len(detail)]) + detail
        (decoded,) = decode_details(raw)
        assert type(decoded).__name__ == "Any", type(decoded)
        assert decoded.type_url.endswith("google.rpc.BadRequest")
        client = diagnosis.DiagnosisClient(diagnosis.ConnectionConfig(target="127.0.0.1:1"))
        client.close()
        loaded = sorted(m for m in sys.modules if m.startswith(("google.rpc", "diagnosis_server", "pydantic")))
        print("ok", loaded)
        """
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok []"


def test_public_names_are_reexported_and_typed() -> None:
    for name in diagnosis.__all__:
        assert hasattr(diagnosis, name), name
    assert (CLIENT / "py.typed").exists()
