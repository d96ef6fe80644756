#!/bin/bash
# PodStart lifecycle script for SageMaker HyperPod (EKS orchestrator). Versioned with PodStart and
# uploaded to PodStart's assets bucket under a content hash; HyperPod runs it on every new node.
set -euo pipefail
LOG=/var/log/podstart-lifecycle.log
exec > >(tee -a "$LOG") 2>&1
echo "[podstart] on_create start: $(date -Is)"

# Containerd and kubelet state on the large NVMe/EBS volume HyperPod mounts at /opt/sagemaker.
if [ -d /opt/sagemaker ]; then
  mkdir -p /opt/sagemaker/containerd /opt/sagemaker/kubelet
fi

# Raise limits distributed training needs.
cat > /etc/security/limits.d/90-podstart.conf <<'LIMITS'
* soft memlock unlimited
* hard memlock unlimited
* soft nofile 1048576
* hard nofile 1048576
LIMITS

echo "[podstart] on_create done: $(date -Is)"
