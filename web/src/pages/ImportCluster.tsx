import { useMemo, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { ClusterImport } from "../api/types";
import { useFlash } from "../lib/flash";
import { identity, isAdmin, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { href, navigate } from "../lib/router";
import { cached, useAsync } from "../lib/useAsync";

export const IMPORT_FIELDS = ["region", "eks_cluster_name", "name"];

/** The request body: the PodStart name only when one is given (the default is the EKS name). */
export function importBody(region: string, eksClusterName: string, name: string): ClusterImport {
  const body: ClusterImport = { region, eks_cluster_name: eksClusterName.trim() };
  if (name.trim()) body.name = name.trim();
  return body;
}

/** Adopt an existing HyperPod-on-EKS cluster: POST /v1/clusters/import, then its progress. */
export default function ImportCluster({ region: initialRegion, eksClusterName }: { region?: string; eksClusterName?: string }) {
  const regions = useAsync(() => cached("regions", () => api.regions()), []);
  const { me, loading: meLoading } = useMe();
  const [region, setRegion] = useState(initialRegion ?? "");
  const [eks, setEks] = useState(eksClusterName ?? "");
  const [name, setName] = useState("");
  const [missing, setMissing] = useState<Record<string, string>>({});
  const flash = useFlash();
  // Accepted: the imported cluster's page, where the import runs step by step (a flash follows it too).
  const imp = useMutation((body: ClusterImport, key: string) => api.importCluster(body, key), {
    fields: IMPORT_FIELDS,
    onAccepted: (op) => {
      flash.track(op);
      navigate(href.cluster(op.target?.region ?? region, op.target?.cluster ?? (name.trim() || eks.trim())));
    },
  });
  const admin = isAdmin(me);
  const notAllowed = !meLoading && !admin;
  const err = (f: string) => missing[f] || imp.fieldErrors[f] || undefined;
  const options = useMemo(() => (regions.data?.items ?? []).map((r) => ({ value: r.name, label: r.name })), [regions.data]);

  const submit = () => {
    const m: Record<string, string> = {};
    if (!region) m.region = "Choose the region of the EKS cluster.";
    if (!eks.trim()) m.eks_cluster_name = "Name the EKS cluster to import.";
    setMissing(m);
    if (Object.keys(m).length || notAllowed) return;
    void imp.run(importBody(region, eks, name));
  };

  return (
    <SpaceBetween size="l">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          submit();
        }}
      >
        <Form
          header={
            <Header
              variant="h1"
              description="Adopt a HyperPod cluster on EKS that PodStart did not create. PodStart adds one EKS access entry (cluster-admin) for its own role and records what it finds; it changes nothing else, and deleting it from PodStart later leaves the cluster running."
            >
              Import cluster
            </Header>
          }
          errorText={imp.errors.length ? imp.errors.join("; ") : undefined}
          actions={
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" onClick={() => navigate(href.clusters())}>
                Cancel
              </Button>
              <Button
                variant="primary"
                formAction="submit"
                loading={imp.busy}
                disabled={notAllowed}
                disabledReason={notAllowed ? "Only an admin can import a cluster." : undefined}
              >
                Import
              </Button>
            </SpaceBetween>
          }
        >
          <Container>
            <SpaceBetween size="l">
              {notAllowed && (
                <Alert type="info" header="Only an admin can import a cluster">
                  Importing grants PodStart cluster-admin on the EKS cluster, so it needs the admin role.
                  {me ? ` You are signed in as ${identity(me)}.` : ""}
                </Alert>
              )}
              <FormField label="Region" errorText={err("region") ?? (regions.error ? `Could not list regions: ${regions.error.message}` : undefined)}>
                <Select
                  selectedOption={region ? { value: region, label: region } : null}
                  onChange={({ detail }) => {
                    setRegion(detail.selectedOption.value ?? "");
                    setMissing((m) => ({ ...m, region: "" }));
                    imp.clearField("region");
                  }}
                  options={options}
                  statusType={regions.loading ? "loading" : "finished"}
                  loadingText="Loading regions"
                  placeholder="Choose a region"
                  filteringType="auto"
                  ariaLabel="Region"
                  data-testid="import-region-select"
                />
              </FormField>
              <FormField label="EKS cluster name" description="The EKS cluster HyperPod runs on, as the EKS console names it." errorText={err("eks_cluster_name")}>
                <Input
                  value={eks}
                  onChange={({ detail }) => {
                    setEks(detail.value);
                    setMissing((m) => ({ ...m, eks_cluster_name: "" }));
                    imp.clearField("eks_cluster_name");
                  }}
                  ariaLabel="EKS cluster name"
                />
              </FormField>
              <FormField
                label="PodStart name"
                description="How PodStart, agents and the CLI will call it. Leave empty to use the EKS cluster name."
                constraintText="Lowercase letters, digits and '-', starting with a letter; at most 32 characters."
                errorText={err("name")}
              >
                <Input
                  value={name}
                  onChange={({ detail }) => {
                    setName(detail.value);
                    imp.clearField("name");
                  }}
                  placeholder={eks || "e.g. research-gpu"}
                  ariaLabel="PodStart name"
                />
              </FormField>
            </SpaceBetween>
          </Container>
        </Form>
      </form>
    </SpaceBetween>
  );
}
