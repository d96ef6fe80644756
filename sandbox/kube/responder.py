"""The API server's service proxy (`/api/v1/namespaces/{ns}/services/{name}:{port}/proxy/...`) in front of a
tiny OpenAI-compatible responder: what a vLLM/SGLang pod behind the Service would answer, deterministic and
naming the model, so invoke works end to end in the sandbox. 503 when no Ready pod backs the Service."""

from __future__ import annotations

import base64
import hashlib
import json
from typing import Any

from functions.assets import podstart_gate as gate
from functions.assets import podstart_pool_worker as pool_worker
from functions.domain.inference.manifests import GATE
from sandbox.kube.errors import ApiError
from sandbox.kube.store import ClusterStore, Obj


def _ready(p: Obj) -> bool:
    st = p.get("status") or {}
    return st.get("phase") == "Running" and any(c.get("type") == "Ready" and c.get("status") == "True"
                                                for c in st.get("conditions") or [])


def backends(store: ClusterStore, namespace: str, service: str) -> list[Obj]:
    svc = store.get("v1", "Service", service, namespace)
    if svc is None:
        raise ApiError(404, "NotFound", f'services "{service}" not found')
    sel = (svc.get("spec") or {}).get("selector") or {}
    if not sel:
        return []
    pods = store.list("v1", "Pod", namespace, label_selector=",".join(f"{k}={v}" for k, v in sel.items()))
    return sorted((p for p in pods if _ready(p)), key=lambda p: p["metadata"]["name"])


def _pool_worker(pod: Obj) -> bool:
    containers = (pod.get("spec") or {}).get("containers") or []
    return any(pool_worker.POOL_SCRIPT_NAME in " ".join(c.get("command") or []) for c in containers)


def model_of(pod: Obj) -> str:
    ann = pod["metadata"].get("annotations") or {}
    if _pool_worker(pod):
        # a pool worker: what its supervisor (the same script) would serve, from the annotations pool.assign wrote
        assigned = pool_worker.assignment({k: str(v) for k, v in ann.items()})
        return assigned.name if assigned else "unassigned"
    if ann.get("podstart.dev/model-name"):
        return str(ann["podstart.dev/model-name"])
    for c in (pod.get("spec") or {}).get("containers") or []:
        cmd = [*(c.get("command") or []), *(c.get("args") or [])]
        if "--served-model-name" in cmd and cmd.index("--served-model-name") + 1 < len(cmd):
            return str(cmd[cmd.index("--served-model-name") + 1])
    return (pod["metadata"].get("labels") or {}).get("podstart.dev/model", "unknown-model")


def gate_key(store: ClusterStore, pod: Obj) -> str | None:
    """The API key a pod's gate checks (its PODSTART_API_KEY from the endpoint's Secret), or None: no gate."""
    for c in (pod.get("spec") or {}).get("containers") or []:
        if c.get("name") != GATE:
            continue
        ref = next(((e.get("valueFrom") or {}).get("secretKeyRef") or {} for e in c.get("env") or []
                    if e.get("name") == gate.KEY_ENV), {})
        secret = store.get("v1", "Secret", ref.get("name", ""), pod["metadata"].get("namespace")) or {}
        raw = (secret.get("data") or {}).get(ref.get("key", ""))
        return base64.b64decode(raw).decode() if raw else ""
    return None


_SENTENCES = (
    "I am a language model served on this endpoint, and I can help with questions, summaries and code.",
    "The short answer is yes, with the usual caveats about context and data quality.",
    "Here is a concise plan: state the goal, gather the inputs, check the constraints, then act.",
    "That depends on the workload; batch size and sequence length matter most for throughput.",
    "In short: measure first, change one thing at a time, and keep what helps.",
    "A good first step is to reproduce the issue on a small example before scaling up.",
)


def tokens(text: str) -> int:
    """A tokenizer's count, roughly (about four characters a token)."""
    return max(1, (len(text) + 3) // 4) if text else 0


def reply(model: str, messages: list[Any], digest: str, max_tokens: int) -> str:
    """What the sandbox's engine answers: model-like sentences chosen by the conversation (deterministic), never
    the prompt echoed back, cut at max_tokens like an engine."""
    n = int(digest[8:16], 16)
    picked = [_SENTENCES[(n + i * 7) % len(_SENTENCES)] for i in range(1 + n % 3)]
    text = f"Hello from {model}. " + " ".join(picked)
    return text[: max(4, max_tokens * 4)]


def proxy(store: ClusterStore, namespace: str, service_ref: str, method: str, path: str,
          body: bytes, headers: dict[str, str] | None = None) -> tuple[int, bytes]:
    service = service_ref.split(":", 1)[0]
    pods = backends(store, namespace, service)
    if not pods:
        return 503, json.dumps({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 503,
                                "reason": "ServiceUnavailable",
                                "message": f'no endpoints available for service "{service}"'}).encode()
    digest = hashlib.sha256(body).hexdigest()
    pod = pods[int(digest[:8], 16) % len(pods)]
    model = model_of(pod)
    key = gate_key(store, pod)
    if key is not None and not gate.authorized(path, headers or {}, key):  # the gate answers before the engine
        return 401, json.dumps({"error": {"message": "Unauthorized: send the endpoint's API key (Authorization: "
                                                     "Bearer <key>)", "type": "invalid_request_error",
                                          "code": 401}}).encode()
    if path in ("/health", "/healthz") and method == "GET":
        return 200, b"ok"
    if path == "/v1/models" and method == "GET":
        return 200, json.dumps({"object": "list", "data": [{"id": model, "object": "model"}]}).encode()
    if path not in ("/v1/chat/completions", "/v1/completions") or method != "POST":
        return 404, json.dumps({"error": {"message": f"no route {method} {path}"}}).encode()
    try:
        req: dict[str, Any] = json.loads(body or b"{}")
    except ValueError:
        return 400, json.dumps({"error": {"message": "body is not JSON"}}).encode()
    if _pool_worker(pod) and req.get("model") not in (None, model):
        # as vLLM answers a model name it does not serve (the supervisor starts it with --served-model-name)
        return 404, json.dumps({"error": {"message": f"The model `{req.get('model')}` does not exist.",
                                          "type": "NotFoundError", "code": 404}}).encode()
    max_tokens = int(req.get("max_tokens") or 256)
    if path == "/v1/completions":  # a completion: the prompt continued, as vLLM's and SGLang's completions API
        prompt = str(req.get("prompt") or "")
        text = reply(model, [prompt], digest, max_tokens)
        prompt_tokens, completion_tokens = tokens(prompt), tokens(text)
        return 200, json.dumps({
            "id": "cmpl-" + digest[:24], "object": "text_completion", "created": 0, "model": model,
            "choices": [{"index": 0, "text": text, "logprobs": None,
                         "finish_reason": "length" if completion_tokens >= max_tokens else "stop"}],
            "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                      "total_tokens": prompt_tokens + completion_tokens},
            "system_fingerprint": f"sandbox/{pod['metadata']['name']}",
        }).encode()
    messages = req.get("messages") or []
    text = reply(model, messages, digest, max_tokens)
    prompt_tokens = sum(tokens(str(m.get("content", ""))) for m in messages if isinstance(m, dict)) + 3 * len(messages)
    completion_tokens = tokens(text)
    return 200, json.dumps({
        "id": "chatcmpl-" + digest[:24], "object": "chat.completion", "created": 0, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                     "finish_reason": "length" if completion_tokens >= int(req.get("max_tokens") or 256) else "stop"}],
        "usage": {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                  "total_tokens": prompt_tokens + completion_tokens},
        "system_fingerprint": f"sandbox/{pod['metadata']['name']}",
    }).encode()
