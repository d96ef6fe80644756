"""Kubernetes protobuf request bodies (`application/vnd.kubernetes.protobuf`), decoded to the JSON a client would
have sent. `messages.json` is generated from the message descriptors compiled into kubectl
(`python -m sandbox.kube.proto.generate /usr/bin/kubectl`); `wire.py` reads the wire format with it."""

from sandbox.kube.proto.wire import PROTOBUF, decode_object

__all__ = ["PROTOBUF", "decode_object"]
