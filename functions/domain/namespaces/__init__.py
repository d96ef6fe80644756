"""PodStart namespaces: the namespace requests and the objects a namespace holds (`models`) and the
namespace.create/delete planner (`plan`). What makes a namespace PodStart's (`functions.domain.tenancy`) is kernel: the
live socket and storage read it too. Other capabilities import `api` only."""
