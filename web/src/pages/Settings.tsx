// Settings: who you are (GET /v1/me: name, role, what it allows, how you signed in), your preferences (active
// cluster, default region; PUT /v1/preferences with only what changed), the deployment's fair-share limits, and the
// appearance (dark mode follows the system).
import { useEffect, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { Preferences } from "../api/types";
import { getToken } from "../auth";
import { ResourceTable } from "../components/ResourceTable";
import { Status } from "../components/Status";
import { changedFields, isEmpty } from "../lib/diff";
import { useFlash } from "../lib/flash";
import { text } from "../lib/format";
import { useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { cached, useAsync } from "../lib/useAsync";

/** What each limit means (GET /v1/me `limits`, functions/domain/limits.py). */
export const LIMITS: Record<string, string> = {
  long_polls_per_user: "Long polls one user may hold at once (watching an operation without the live feed)",
  long_polls_total: "Long polls everybody may hold at once",
  sockets_per_user: "Live sockets one user may hold open (browser tabs, agents)",
  sockets_total: "Live sockets the deployment holds open",
  follows_per_user: "Job logs one user may follow at once",
  follows_total: "Job logs everybody may follow at once",
  retry_after_s: "Seconds to wait when a limit is reached (Retry-After)",
};

function useColorScheme(): "dark" | "light" {
  const q = typeof window !== "undefined" ? window.matchMedia?.("(prefers-color-scheme: dark)") : undefined;
  const [dark, setDark] = useState(!!q?.matches);
  useEffect(() => {
    if (!q) return;
    const on = () => setDark(q.matches);
    q.addEventListener?.("change", on);
    return () => q.removeEventListener?.("change", on);
  }, [q]);
  return dark ? "dark" : "light";
}

export default function Settings() {
  const { me, loading } = useMe();
  const prefs = useAsync(() => api.preferences(), []);
  const clusters = useAsync(() => api.clusters({ limit: 100 }), []);
  const regions = useAsync(() => cached("regions", () => api.regions()), []);
  const flash = useFlash();
  const [active, setActive] = useState<string | undefined>();
  const [region, setRegion] = useState<string | undefined>();
  const scheme = useColorScheme();
  // what the last save answered, until the preferences are read again
  const [saved, setSaved] = useState<Preferences | undefined>();
  const current = saved ?? prefs.data;
  const activeNow = current?.active_cluster ? `${current.active_cluster.region}/${current.active_cluster.name}` : "";
  const activeValue = active ?? activeNow;
  const regionValue = region ?? current?.default_region ?? "";
  const save = useMutation((body: Partial<Preferences>, key: string) => api.putPreferences(body, key), {
    fields: ["active_cluster", "default_region"],
    onDone: (p) => {
      setSaved(p);
      prefs.reload();
      setActive(undefined);
      setRegion(undefined);
      flash.push({ type: "success", content: `Preferences saved: active cluster ${p.active_cluster ? `${p.active_cluster.name} (${p.active_cluster.region})` : "none"}, default region ${p.default_region ?? "none"}.` });
    },
    onUnchanged: () => flash.push({ type: "info", content: "Nothing to change: your preferences are already so." }),
  });
  const edited: Record<string, unknown> = {
    active_cluster: activeValue ? { region: activeValue.split("/")[0], name: activeValue.split("/").slice(1).join("/") } : null,
    default_region: regionValue || null,
  };
  const body = current ? changedFields<Record<string, unknown>>({ active_cluster: current.active_cluster ?? null, default_region: current.default_region ?? null }, edited) : {};
  const clusterOptions = [
    { value: "", label: "None" },
    ...(clusters.data?.items ?? []).filter((c) => c.managed).map((c) => ({ value: `${c.region}/${c.name}`, label: c.name, description: c.region })),
  ];
  const regionOptions = [{ value: "", label: "None" }, ...(regions.data?.items ?? []).map((r) => ({ value: r.name, label: r.name }))];
  const limits = Object.entries(me?.limits ?? {}).map(([k, v]) => ({ key: k, value: v }));
  const token = getToken();
  return (
    <SpaceBetween size="l">
      <Header variant="h1" description="Who you are in PodStart, what your role allows, your preferences and this deployment's limits.">Settings</Header>
      <Container header={<Header variant="h2">Profile</Header>}>
        {!me && !loading ? (
          <Alert type="error">Who you are could not be read (GET /v1/me).</Alert>
        ) : (
          <KeyValuePairs
            columns={3}
            items={[
              { label: "Name", value: <span data-testid="settings-name">{text(me?.name ?? me?.sub)}</span> },
              { label: "Subject", value: text(me?.sub) },
              { label: "Role", value: <span data-testid="settings-role">{text(me?.role)}</span> },
              { label: "Reads everything", value: <Status type="success">Yes</Status> },
              { label: "Changes clusters, jobs, endpoints", value: me?.can_mutate ? <Status type="success">Yes (operator or admin)</Status> : <Status type="stopped">No (viewer)</Status> },
              { label: "Admin actions", value: me?.can_administer ? <Status type="success">Yes (admin)</Status> : <Status type="stopped">No: deleting data, importing, namespaces, public endpoints need an admin</Status> },
              { label: "Signed in with", value: token ? (token.split(".").length === 3 ? "An OAuth access token (Cognito), kept in this tab only" : "A sandbox token, kept in this tab only") : "No token" },
            ]}
          />
        )}
      </Container>
      <form onSubmit={(e) => { e.preventDefault(); if (!isEmpty(body)) void save.run(body as Partial<Preferences>); }}>
        <Form
          errorText={save.errors.length ? save.errors.join("; ") : undefined}
          actions={
            <SpaceBetween direction="horizontal" size="xs">
              <Button variant="link" formAction="none" disabled={isEmpty(body)} onClick={() => { setActive(undefined); setRegion(undefined); }}>Reset</Button>
              <Button variant="primary" formAction="submit" loading={save.busy} disabled={isEmpty(body)} disabledReason={isEmpty(body) ? "Nothing changed yet." : undefined}>Save preferences</Button>
            </SpaceBetween>
          }
        >
          <Container header={<Header variant="h2" description="Agents and the CLI use your active cluster when none is named; the create wizard starts in your default region.">Preferences</Header>}>
            <SpaceBetween size="l">
              <FormField label="Active cluster" errorText={save.fieldErrors.active_cluster}>
                <Select ariaLabel="Active cluster" data-testid="settings-active" selectedOption={clusterOptions.find((o) => o.value === activeValue) ?? { value: activeValue, label: activeValue.split("/").slice(1).join("/") || "None" }}
                  options={clusterOptions} statusType={clusters.loading ? "loading" : "finished"} onChange={({ detail }) => setActive(detail.selectedOption.value ?? "")} />
              </FormField>
              <FormField label="Default region" errorText={save.fieldErrors.default_region}>
                <Select ariaLabel="Default region" selectedOption={regionOptions.find((o) => o.value === regionValue) ?? { value: regionValue, label: regionValue || "None" }}
                  options={regionOptions} filteringType="auto" statusType={regions.loading ? "loading" : "finished"} onChange={({ detail }) => setRegion(detail.selectedOption.value ?? "")} />
              </FormField>
            </SpaceBetween>
          </Container>
        </Form>
      </form>
      <ResourceTable
        id="settings-limits"
        title="Limits"
        description="Shared capacity each user and the deployment may hold; past a limit the API answers 429 with Retry-After"
        items={limits}
        trackBy="key"
        pageSize={10}
        empty={<Box textAlign="center">{loading ? "Loading" : "No limits reported"}</Box>}
        columns={[
          { id: "what", header: "Limit", isRowHeader: true, minWidth: 280, cell: (l) => LIMITS[l.key] ?? l.key, sortValue: (l) => LIMITS[l.key] ?? l.key },
          { id: "value", header: "Value", cell: (l) => <span data-testid={`limit-${l.key}`}>{String(l.value)}</span>, sortValue: (l) => l.value },
          { id: "key", header: "Name", cell: (l) => <Box variant="code">{l.key}</Box>, sortValue: (l) => l.key },
        ]}
      />
      <Container header={<Header variant="h2">Appearance</Header>}>
        <Box>Dark mode follows your system setting: this browser asks for the <b data-testid="color-scheme">{scheme}</b> mode now.</Box>
      </Container>
    </SpaceBetween>
  );
}
