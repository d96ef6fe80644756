"""Capacity: where accelerators can run (the advisor), where pods fit inside a cluster (placement), and buying a
training plan. One package per capability:

- `accelerators`: the accelerator catalog table (GPU/Neuron model, count, memory, EFA, NVLink per instance type);
- `facts`: what the advisor reads from AWS (offerings, quotas, plans, prices, spot scores) and the port reading it;
- `models`: the advice request and answer (REST contract); `advice`: the rules and the ranking;
- `placement`: GPUs free/used per instance group, and where a job or endpoint would run now;
- `purchase`: the training plan purchase request and its confirmation rule; `plan`: the training_plan.purchase planner.

Other capabilities import `api` only. The instance-type catalog (`functions.domain.catalog`) stays in the kernel:
clusters, preferences and the live socket read its regions and instance types.
"""
