"""The sandbox's embedded AWS: moto 5.2 in server mode plus PodStart's extensions."""

from sandbox.aws.calls import CallLog, FaultInjector
from sandbox.aws.embedded import EmbeddedAws
from sandbox.aws.runtime import KubeRegistry

__all__ = ["CallLog", "EmbeddedAws", "FaultInjector", "KubeRegistry"]
