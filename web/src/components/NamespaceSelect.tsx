// Where a form asks for a namespace: a choice among PodStart's namespaces on the cluster (GET .../namespaces),
// default first, never a free text box (system namespaces such as kube-system are not PodStart's to name).
import FormField from "@cloudscape-design/components/form-field";
import Select from "@cloudscape-design/components/select";
import { api } from "../api/client";
import type { NamespaceView } from "../api/types";
import { useAsync, type AsyncState } from "../lib/useAsync";

export const DEFAULT_NAMESPACE = "default";

/** PodStart's namespaces on a cluster (loaded once per cluster). */
export function useNamespaces(cluster: string, region: string, enabled = true): AsyncState<NamespaceView[]> {
  return useAsync(async () => (await api.namespaces(cluster, region)).items, [cluster, region], enabled);
}

/** The options of a namespace select: PodStart's namespaces (a terminating one disabled, with why), `default` at
 * least (it is always PodStart's, even before the list answers). */
export function namespaceOptions(items: NamespaceView[] | undefined) {
  const list = items?.length ? items : [{ name: DEFAULT_NAMESPACE, default: true, status: "Active" } as NamespaceView];
  return list.map((n) => {
    const terminating = n.status !== "Active";
    return {
      value: n.name,
      label: n.name,
      description: n.default ? "the cluster's default namespace" : undefined,
      tags: terminating ? [n.status] : undefined,
      disabled: terminating,
      disabledReason: terminating ? `${n.name} is ${n.status.toLowerCase()}: nothing new goes there` : undefined,
    };
  });
}

export function NamespaceSelect({ cluster, region, value, onChange, error, description, label = "Namespace", namespaces }: {
  cluster: string;
  region: string;
  value: string;
  onChange: (name: string) => void;
  error?: string;
  description?: string;
  label?: string;
  /** The list, when the caller already loads it; else the select loads it. */
  namespaces?: AsyncState<NamespaceView[]>;
}) {
  const own = useNamespaces(cluster, region, !namespaces);
  const list = namespaces ?? own;
  const options = namespaceOptions(list.data);
  const selected = options.find((o) => o.value === value) ?? (value ? { value, label: value } : null);
  return (
    <FormField
      label={label}
      description={description ?? "One of PodStart's namespaces on this cluster (an admin creates more in Namespaces)"}
      errorText={error ?? (list.error ? `The namespaces could not be read: ${list.error.message}` : undefined)}
    >
      <Select
        ariaLabel={label}
        data-testid="namespace-select"
        statusType={list.loading && !list.data ? "loading" : "finished"}
        loadingText="Loading namespaces"
        selectedOption={selected}
        options={options}
        onChange={({ detail }) => onChange(detail.selectedOption.value ?? DEFAULT_NAMESPACE)}
      />
    </FormField>
  );
}
