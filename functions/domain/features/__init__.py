"""Managed features: the features document (`document`), the PATCH rules on it (`changes`), the KubeRay operator's
manifests (`kuberay`) and the features.update planner (`plan`). The graph of features (`functions.domain.feature_graph`)
stays in the kernel: the operation kinds read their steps from it. Other capabilities import `api` only."""
