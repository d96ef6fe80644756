// The job's metrics charts, in their own chunk: the chart library loads after the job page has painted.
import { useEffect, useRef } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import Header from "@cloudscape-design/components/header";
import LineChart from "@cloudscape-design/components/line-chart";
import { api } from "../api/client";
import type { JobMetrics } from "../api/types";
import { useAsync } from "../lib/useAsync";

/** The job's metrics by step, one chart per series (loss, throughput, ...): from its MLflow run when it reports to
 * MLflow, else from its log. Refreshed while the job runs. */
export default function MetricsCharts({ cluster, region, job, namespace, running }: { cluster: string; region: string; job: string; namespace: string; running: boolean }) {
  // A read still in flight when the page goes (the job deleted, the user gone elsewhere) is cancelled: its answer
  // is for nobody, and a job deleted meanwhile would answer 404.
  const inFlight = useRef<AbortController | undefined>(undefined);
  const m = useAsync(() => {
    inFlight.current?.abort();
    inFlight.current = new AbortController();
    return api.jobMetrics(cluster, region, job, namespace, inFlight.current.signal);
  }, [cluster, region, job, namespace]);
  useEffect(() => () => inFlight.current?.abort(), []);
  useEffect(() => {
    if (!running) return;
    const t = setInterval(() => m.reload(), 5000);
    return () => clearInterval(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [running, cluster, region, job, namespace]);
  const data: JobMetrics | undefined = m.data;
  const from = !data ? "" : data.source === "mlflow" ? `From MLflow run ${data.run ?? ""}` : data.source === "logs" ? `Parsed from ${data.pod}'s log` : "Nothing reported yet";
  return (
    <Container
      data-testid="job-metrics"
      header={<Header variant="h2" description={<span data-testid="metrics-source" data-source={data?.source}>{from}{data?.note ? ` · ${data.note}` : ""}</span>}
        actions={<Button iconName="refresh" ariaLabel="Refresh metrics" onClick={m.reload} />}>Metrics</Header>}
    >
      {m.error ? (
        <Alert type="warning" header="The metrics could not be read">{m.error.message}</Alert>
      ) : !data ? (
        <Box color="text-body-secondary">Loading the metrics…</Box>
      ) : !(data.series ?? []).length ? (
        <Box color="text-body-secondary">{data.note ?? "No step has been reported yet."}</Box>
      ) : (
        <ColumnLayout columns={Math.min(2, (data.series ?? []).length)} minColumnWidth={280}>
          {(data.series ?? []).map((s) => {
            const pts = s.points.map((p) => ({ x: p.step, y: p.value }));
            const last = s.points[s.points.length - 1];
            return (
              <div key={s.name} className="ps-chart" data-testid={`metric-${s.name.split(" ")[0]}`} data-points={s.points.length}>
                <LineChart
                  series={[{ title: s.name, type: "line", data: pts, valueFormatter: (v) => v.toLocaleString("en-US", { maximumFractionDigits: 4 }) }]}
                  xScaleType="linear"
                  xTitle="Step"
                  yTitle={s.name}
                  height={180}
                  hideFilter
                  hideLegend
                  ariaLabel={`${s.name} by step`}
                  ariaDescription={last ? `${s.points.length} steps; at step ${last.step}: ${last.value}` : undefined}
                  i18nStrings={{ xTickFormatter: (x) => String(x), yTickFormatter: (y) => y.toLocaleString("en-US", { maximumFractionDigits: 3 }) }}
                  statusType="finished"
                  empty={<Box textAlign="center">No points</Box>}
                />
                {last && <Box variant="small" color="text-body-secondary">{`${s.name} at step ${last.step}: ${last.value.toLocaleString("en-US", { maximumFractionDigits: 4 })}`}</Box>}
              </div>
            );
          })}
        </ColumnLayout>
      )}
    </Container>
  );
}
