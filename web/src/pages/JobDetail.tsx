import { Suspense, lazy, useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { api } from "../api/client";
import type { JobDetail as Job, JobLogs } from "../api/types";
import { ConfirmModal } from "../components/ConfirmModal";
import { CopyId } from "../components/CopyId";
import { ResourceTable } from "../components/ResourceTable";
import { Status } from "../components/Status";
import { text } from "../lib/format";
import { canMutate, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { href, navigate } from "../lib/router";
import { Time } from "../lib/time";
import { useAsync } from "../lib/useAsync";
import { useLive, type FollowMessage } from "../lib/events";

// the chart library is the page's largest part: it loads after the heading and the overview have painted
const MetricsCharts = lazy(() => import("../components/MetricsCharts"));

const REFRESH_MS = 3000;
const FOLLOW_MS = 1000;
const TAIL = 200;
const KEEP = 2000; // lines a followed log keeps in the page

/** The job's log, newest lines of one pod. While the socket is up, lines arrive as the pod writes them (a
 * follow over /ws); without it, the tail is fetched every second. Pause stops either; the tail can be
 * downloaded. */
function Logs({ cluster, region, job, stopped }: { cluster: string; region: string; job: Job; stopped: boolean }) {
  const pods = job.pods.map((p) => p.name);
  const live = useLive();
  const [pod, setPod] = useState<string | undefined>(pods[0]);
  const [following, setFollowing] = useState(true);
  const [lines, setLines] = useState<string[]>([]);
  const [truncated, setTruncated] = useState(false);
  const [ended, setEnded] = useState<string | undefined>();
  const [error, setError] = useState<string | undefined>();
  const [again, setAgain] = useState(0);
  const box = useRef<HTMLPreElement>(null);
  const overSocket = live.state === "live";
  useEffect(() => {
    if (!pod && pods.length) setPod(pods[0]);
  }, [pod, pods]);
  // live: follow over the socket
  useEffect(() => {
    if (!pod || stopped || !following || !overSocket) return;
    setEnded(undefined);
    return live.follow(
      { cluster, region, job: job.name, namespace: job.namespace, pod, tail: TAIL },
      (m: FollowMessage) => {
        if (m.type === "restart") setLines([]);
        else if (m.type === "log") {
          setError(undefined);
          setLines((prev) => {
            const next = prev.concat(m.lines);
            if (next.length > KEEP) setTruncated(true);
            return next.length > KEEP ? next.slice(next.length - KEEP) : next;
          });
        } else if (m.type === "error") setError(m.detail);
        else if (m.type === "log_end") {
          if (m.reason.startsWith("time limit")) setAgain((n) => n + 1);
          else if (m.reason !== "unfollowed") setEnded(m.reason);
        }
      },
    );
  }, [live, overSocket, cluster, region, job.name, job.namespace, pod, following, stopped, again]);
  // without the socket: the tail, fetched every second while following
  useEffect(() => {
    if (!pod || stopped || overSocket) return;
    let stop = false;
    const load = () =>
      api
        .jobLogs(cluster, region, job.name, { namespace: job.namespace, pod, tail: TAIL })
        .then((l: JobLogs) => {
          if (!stop) {
            setLines(l.lines);
            setTruncated(l.truncated);
            setError(undefined);
          }
        })
        .catch((e: Error) => !stop && setError(e.message));
    void load();
    const t = following ? setInterval(() => void load(), FOLLOW_MS) : undefined;
    return () => {
      stop = true;
      if (t) clearInterval(t);
    };
  }, [cluster, region, job.name, job.namespace, pod, following, stopped, overSocket]);
  useEffect(() => {
    setLines([]);
    setTruncated(false);
  }, [pod]);
  useEffect(() => {
    if (following && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, following]);
  const download = () => {
    const blob = new Blob([lines.join("\n") + "\n"], { type: "text/plain" });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `${job.name}-${pod ?? "pod"}.log`;
    a.click();
    URL.revokeObjectURL(a.href);
  };
  const mode = !following ? "Paused" : overSocket ? "Live" : "Refreshing every second";
  return (
    <Container
      header={
        <Header
          variant="h2"
          description={
            <span data-testid="log-mode">
              {mode}
              {truncated ? ` · the newest ${lines.length} lines` : ""}
            </span>
          }
          actions={
            <SpaceBetween direction="horizontal" size="xs">
              <Select
                ariaLabel="Pod"
                selectedOption={pod ? { value: pod, label: pod } : null}
                options={pods.map((p) => ({ value: p, label: p }))}
                onChange={({ detail }) => setPod(detail.selectedOption.value)}
              />
              <Button onClick={() => setFollowing((f) => !f)}>{following ? "Pause" : "Follow"}</Button>
              <Button onClick={download} disabled={!lines.length}>Download tail</Button>
            </SpaceBetween>
          }
        >
          Logs
        </Header>
      }
    >
      {error && <Alert type="warning">{error}</Alert>}
      {ended && <Box color="text-body-secondary">Stream ended: {ended}</Box>}
      {!pod ? (
        <Box color="text-body-secondary">No pods yet</Box>
      ) : (
        <pre ref={box} data-testid="job-logs" className="ps-log" tabIndex={0} aria-label={`Log of ${pod}`}>
          {lines.join("\n")}
        </pre>
      )}
    </Container>
  );
}

/** The MLflow UI, opened when the user asks: the presigned link (a session on the tracking server, expiring in
 * minutes) is made on that click, never on the page's refreshes. The tab opens within the click (no popup
 * blocker), then goes to the link. A viewer reads why there is no link. */
function MlflowLink({ cluster, region, job, namespace, note }: { cluster: string; region: string; job: string; namespace: string; note?: string | null }) {
  const { me } = useMe();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  if (!canMutate(me)) return <Box color="text-body-secondary" fontSize="body-s">{text(note)}</Box>;
  const open = async () => {
    const tab = window.open("", "_blank");
    setBusy(true);
    setError(null);
    try {
      const fresh = await api.job(cluster, region, job, namespace, true);
      const url = fresh.mlflow?.url;
      if (!url) {
        tab?.close();
        setError(text(fresh.mlflow?.url_note));
      } else if (tab) {
        tab.opener = null;
        tab.location.href = url;
      } else {
        setError("The browser blocked the new tab: allow pop-ups for this site and try again.");
      }
    } catch (e) {
      tab?.close();
      setError((e as Error).message);
    } finally {
      setBusy(false);
    }
  };
  return (
    <SpaceBetween size="xxs">
      <Button variant="inline-link" iconName="external" loading={busy} onClick={() => void open()} data-testid="open-in-mlflow">Open in MLflow</Button>
      {error && <Box color="text-status-error" fontSize="body-s">{error}</Box>}
    </SpaceBetween>
  );
}

const RUNNING = new Set(["Pending", "Running", "Restarting", "Hanging"]);

export default function JobDetail({ region, name, job, namespace }: { region: string; name: string; job: string; namespace: string }) {
  const detail = useAsync(() => api.job(name, region, job, namespace), [name, region, job, namespace]);
  const [confirm, setConfirm] = useState(false);
  // Deleted: back to the cluster's Jobs tab, where the flash follows the delete.
  const del = useMutation((_: null, key: string) => api.deleteJob(name, region, job, namespace, key), {
    afterAccepted: () => navigate(href.cluster(region, name, "jobs")),
  });
  const { me } = useMe();
  const viewer = me && !canMutate(me) ? `Only operators and admins delete jobs (you are ${me.role}).` : undefined;
  useEffect(() => {
    if (confirm) return;
    const t = setInterval(() => detail.reload(), REFRESH_MS);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [name, region, job, namespace, confirm]);
  const j = detail.data;
  return (
    <SpaceBetween size="l">
      <Header variant="h1" description={`${namespace} · ${name} (${region})`}
        actions={<Button onClick={() => setConfirm(true)} disabled={!j || !!viewer} disabledReason={viewer}>Delete job</Button>}>
        {job}
      </Header>
      {detail.error && !j && <Alert type="error">{detail.error.message}</Alert>}
      {j && (
        <>
          <Container header={<Header variant="h2">Overview</Header>}>
            <KeyValuePairs
              columns={3}
              items={[
                { label: "Status", value: <Status value={j.status} /> },
                { label: "Recovery budget used", value: <span data-testid="job-budget">{`${j.budget.used} of ${j.budget.max}${j.budget.exhausted ? " (exhausted)" : ""}`}</span> },
                { label: "Kind", value: j.kind === "ray" ? "RayJob" : "HyperPodPyTorchJob" },
                { label: "Recipe", value: text(j.recipe) },
                { label: "Image", value: text(j.image) },
                { label: "Nodes", value: `${text(j.nodes, "unknown")} × ${text(j.instance_type, "unknown")}, ${text(j.gpus_per_node, "unknown")} GPUs each` },
                { label: "Started", value: <Time value={j.started_at} /> },
                { label: "Ended", value: j.ended_at ? <Time value={j.ended_at} /> : RUNNING.has(j.status) ? "Still running" : "—" },
                { label: "Checkpoints", value: j.data.checkpoints },
                ...(j.mlflow
                  ? [{
                      label: "MLflow",
                      value: (
                        <SpaceBetween size="xxs">
                          <span>{`${j.mlflow.tracking_server_arn.split("/").pop()} · experiment ${j.mlflow.experiment}`}</span>
                          <MlflowLink cluster={name} region={region} job={job} namespace={namespace} note={j.mlflow.url_note} />
                        </SpaceBetween>
                      ),
                    }]
                  : []),
              ]}
            />
          </Container>
          {j.detections.length > 0 && (
            <Alert type="warning" header="Detections">
              {j.detections.map((d) => `${d.type}${d.rule ? ` (${d.rule})` : ""}: ${d.message}`).join("; ")}
            </Alert>
          )}
          {/* not refreshed while the delete is being confirmed (as the page itself) */}
          <Suspense fallback={<Container header={<Header variant="h2">Metrics</Header>}><Box color="text-body-secondary">Loading the metrics…</Box></Container>}>
            <MetricsCharts cluster={name} region={region} job={job} namespace={namespace} running={RUNNING.has(j.status) && !confirm} />
          </Suspense>
          <ResourceTable
            id="job-pods"
            title="Pods"
            items={j.pods}
            trackBy="name"
            pageSize={10}
            empty={<Box textAlign="center">No pods yet</Box>}
            columns={[
              { id: "name", header: "Pod", cell: (p) => p.name, isRowHeader: true, sortValue: (p) => p.name },
              { id: "node", header: "Node", minWidth: 200, cell: (p) => (p.node ? <CopyId value={p.node} label="node" /> : text(p.node)), sortValue: (p) => p.node },
              { id: "phase", header: "Phase", cell: (p) => <Status value={p.phase} />, sortValue: (p) => p.phase },
              { id: "restarts", header: "Restarts", cell: (p) => String(p.restarts ?? 0), sortValue: (p) => p.restarts ?? 0 },
              { id: "reason", header: "Reason", cell: (p) => text(p.reason), sortValue: (p) => p.reason },
            ]}
          />
          {/* Deleting: the pods go away, so the log stops being read. */}
          <Logs cluster={name} region={region} job={j} stopped={confirm} />
          <ResourceTable
            id="job-conditions"
            title="Conditions"
            items={j.conditions}
            trackBy={(c) => `${c.type}/${c.at ?? ""}`}
            pageSize={10}
            wrapLines
            empty={<Box textAlign="center">None reported</Box>}
            columns={[
              { id: "type", header: "Type", cell: (c) => c.type, isRowHeader: true, sortValue: (c) => c.type },
              { id: "status", header: "Status", cell: (c) => c.status, sortValue: (c) => c.status },
              { id: "message", header: "Message", minWidth: 240, cell: (c) => text(c.message || c.reason), filterText: (c) => `${c.message ?? ""} ${c.reason ?? ""}` },
              { id: "at", header: "Since", cell: (c) => <Time value={c.at} />, sortValue: (c) => c.at },
            ]}
          />
        </>
      )}
      {confirm && (
        <ConfirmModal
          header={`Delete ${job}?`}
          confirmLabel="Delete"
          typeToConfirm={job}
          warning="The job and its pods are deleted. Checkpoints and outputs under /data stay."
          busy={del.busy}
          errors={del.errors}
          onConfirm={() => void del.run(null)}
          onCancel={() => setConfirm(false)}
        />
      )}
    </SpaceBetween>
  );
}
