"""Names users pass that become paths or keys, parsed by their grammar (never matched loosely):

- a Hugging Face model id `owner/name` (huggingface_hub's repo id rules: letters, digits, `_`, `-`, `.`, each part
  1-96 characters starting and ending with a letter, digit or `_`, no `--` or `..`, not ending in `.git`);
- a revision: a branch or tag name that is one path segment (git's ref rules: no `..`, no leading `.`, not ending
  in `.lock` or `.`), or a commit hash;
- a JumpStart model id (lowercase words joined by `-` or `.`);
- an S3 URI `s3://bucket/key` (S3's bucket naming rules; a key with no empty, `.` or `..` segment).

Each validator raises ValueError with the accepted form and an example, so the 422 names the field and says it.
"""

from __future__ import annotations

import ipaddress
import re

JOB_NAME = r"^[a-z]([-a-z0-9]{0,50}[a-z0-9])?$"  # a training job's name (a Kubernetes name PodStart suffixes)

_HF_PART = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,94}[A-Za-z0-9_])?$")
_REVISION = re.compile(r"^[A-Za-z0-9_](?:[A-Za-z0-9_.-]{0,62}[A-Za-z0-9_])?$")
_JUMPSTART = re.compile(r"^[a-z0-9](?:[a-z0-9.-]{0,126}[a-z0-9])?$")
HF_EXAMPLE = "Qwen/Qwen3-0.6B"


def hf_model_id(v: str) -> str:
    parts = v.split("/")
    if len(parts) != 2:
        raise ValueError(f"a Hugging Face model id is owner/name, e.g. {HF_EXAMPLE}")
    for part in parts:
        if not _HF_PART.match(part):
            raise ValueError(f"{part!r}: each part of owner/name has 1-96 letters, digits, '_', '-' or '.', starting "
                             f"and ending with a letter, digit or '_' (e.g. {HF_EXAMPLE})")
        if "--" in part or ".." in part:
            raise ValueError(f"{part!r}: '--' and '..' are not allowed in a Hugging Face id (e.g. {HF_EXAMPLE})")
    if v.endswith(".git"):
        raise ValueError(f"a model id does not end in .git (e.g. {HF_EXAMPLE})")
    return v


def revision(v: str) -> str:
    if not _REVISION.match(v) or ".." in v or v.endswith(".lock"):
        raise ValueError("a revision is a branch, tag or commit: 1-64 letters, digits, '_', '-' or '.', starting and "
                         "ending with a letter, digit or '_', no '..' (e.g. main, v1.0, or a 40-character commit)")
    return v


def jumpstart_model_id(v: str) -> str:
    if not _JUMPSTART.match(v) or ".." in v:
        raise ValueError("a JumpStart model id is lowercase letters, digits, '-' and '.', e.g. "
                         "huggingface-llm-qwen2-5-7b-instruct")
    return v


def key_problem(key: str) -> str | None:
    """An S3 key or key prefix PodStart will read or mount: relative, no empty/'.'/'..' segment, printable."""
    if key.startswith("/"):
        return "a key does not start with '/'"
    if len(key.encode()) > 1024:
        return "a key has at most 1024 bytes"
    segments = key.rstrip("/").split("/") if key else []
    if any(s in ("", ".", "..") for s in segments):
        return "no empty, '.' or '..' segments"
    if any(ord(c) < 32 or c in "\\" for c in key):
        return "no control characters or backslashes"
    return None


def s3_uri(v: str) -> tuple[str, str]:
    """`s3://bucket/key` -> (bucket, key); ValueError saying the accepted form."""
    if not v.startswith("s3://"):
        raise ValueError("an S3 URI is s3://bucket/key, e.g. s3://my-bucket/datasets/train.jsonl")
    bucket, _, key = v.removeprefix("s3://").partition("/")
    if (why := bucket_problem(bucket)) is not None:
        raise ValueError(f"bucket {bucket!r}: {why} (an S3 URI is s3://bucket/key)")
    if (why := key_problem(key)) is not None:
        raise ValueError(f"key {key!r}: {why} (an S3 URI is s3://bucket/key)")
    return bucket, key


_BUCKET = re.compile(r"^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$")
_BUCKET_BAD_PREFIXES = ("xn--", "sthree-", "amzn-s3-demo-")
_BUCKET_BAD_SUFFIXES = ("-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3")


def bucket_problem(bucket: str) -> str | None:
    """S3's general purpose bucket naming rules."""
    if not 3 <= len(bucket) <= 63:
        return "a bucket name has 3 to 63 characters"
    if not _BUCKET.match(bucket):
        return "lowercase letters, digits, dots and hyphens, starting and ending with a letter or digit"
    if ".." in bucket or ".-" in bucket or "-." in bucket:
        return "no two adjacent periods, and no period next to a hyphen"
    try:
        ipaddress.IPv4Address(bucket)
        return "a bucket name is not formatted as an IP address"
    except ValueError:
        pass
    for p in _BUCKET_BAD_PREFIXES:
        if bucket.startswith(p):
            return f"a bucket name does not start with {p!r}"
    for s in _BUCKET_BAD_SUFFIXES:
        if bucket.endswith(s):
            return f"a bucket name does not end with {s!r} (an access point or directory bucket alias)"
    return None
