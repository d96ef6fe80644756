"""Where the CLI talks to, and as whom: `podstart login` stores the endpoint and token in the user's config
directory (file mode 0600, directory 0700); environment variables override the file.

- PODSTART_ENDPOINT: the REST API's base URL (the sandbox's http://127.0.0.1:3099, or the deployed API's URL)
- PODSTART_TOKEN: the bearer token (the sandbox's .podstart/token, or an OAuth access token)
- PODSTART_WS_URL: the live socket's URL when it is not <endpoint>/ws (deployed: the WebSocket API)
- PODSTART_CONFIG: the config file itself (default: $XDG_CONFIG_HOME/podstart/config.json)
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


def config_path() -> Path:
    explicit = os.environ.get("PODSTART_CONFIG")
    if explicit:
        return Path(explicit).expanduser()
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "podstart" / "config.json"


def load_file() -> dict[str, Any]:
    path = config_path()
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except ValueError as exc:
        raise ConfigError(f"{path} is not JSON ({exc}): run `podstart login` again") from None
    return data if isinstance(data, dict) else {}


def save(values: dict[str, Any]) -> Path:
    """Write the config readable by the user only (0600 from creation: the token is never world-readable)."""
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    tmp = path.with_suffix(".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as f:
        json.dump(values, f, indent=2)
        f.write("\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    return path


def forget() -> bool:
    path = config_path()
    try:
        path.unlink()
    except FileNotFoundError:
        return False
    return True


class ConfigError(Exception):
    pass


@dataclass(frozen=True)
class Settings:
    endpoint: str
    token: str
    ws_url: str | None = None
    source: str = "config"


def settings() -> Settings:
    stored = load_file()
    endpoint = os.environ.get("PODSTART_ENDPOINT") or stored.get("endpoint")
    token = os.environ.get("PODSTART_TOKEN") or stored.get("token")
    if not endpoint or not token:
        missing = " and ".join(n for n, v in (("an endpoint", endpoint), ("a token", token)) if not v)
        raise ConfigError(f"no {missing}: run `podstart login` (or set PODSTART_ENDPOINT and PODSTART_TOKEN)")
    source = "environment" if os.environ.get("PODSTART_TOKEN") else str(config_path())
    return Settings(endpoint=str(endpoint).rstrip("/"), token=str(token),
                    ws_url=os.environ.get("PODSTART_WS_URL") or stored.get("ws_url"), source=source)
