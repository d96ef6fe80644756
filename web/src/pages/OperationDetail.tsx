import { useState } from "react";
import Box from "@cloudscape-design/components/box";
import BreadcrumbGroup from "@cloudscape-design/components/breadcrumb-group";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import type { Operation } from "../api/types";
import { ProgressPanel } from "../components/ProgressPanel";
import { href } from "../lib/router";
import { fmtTime, jsonView, text } from "../lib/format";

export default function OperationDetail({ id }: { id: string }) {
  const [op, setOp] = useState<Operation | null>(null);
  const cluster = op?.target?.cluster;
  const region = op?.target?.region;
  return (
    <SpaceBetween size="l">
      <BreadcrumbGroup
        items={[
          { text: "Operations", href: href.operations() },
          { text: id, href: href.operation(id) },
        ]}
        ariaLabel="Breadcrumbs"
      />
      <Header variant="h1" description={op ? `${op.kind}${cluster ? ` on ${cluster}` : ""}` : undefined}>
        Operation {id}
      </Header>
      <ProgressPanel operationId={id} onChange={setOp} />
      {op && (
        <Container header={<Header variant="h2">Details</Header>}>
          <SpaceBetween size="m">
            <KeyValuePairs
              columns={3}
              items={[
                { label: "Kind", value: text(op.kind) },
                {
                  label: "Cluster",
                  value: cluster && region ? <Link href={href.cluster(region, cluster)}>{cluster}</Link> : text(cluster),
                },
                { label: "Region", value: text(region) },
                { label: "Started", value: fmtTime(op.created_at) },
                { label: "Updated", value: fmtTime(op.updated_at) },
                { label: "Attempt", value: text(op.attempt ?? 1) },
                { label: "Started by", value: text(op.principal?.name ?? op.principal?.sub) },
                { label: "Idempotency key", value: text(op.idempotency_key) },
                { label: "Version", value: text(op.version) },
              ]}
            />
            <ExpandableSection headerText="Request (normalized)">
              <Box variant="code">
                <pre className="ps-pre">{jsonView(op.request)}</pre>
              </Box>
            </ExpandableSection>
            {op.result != null && (
              <ExpandableSection headerText="Result">
                <Box variant="code">
                  <pre className="ps-pre">{jsonView(op.result)}</pre>
                </Box>
              </ExpandableSection>
            )}
          </SpaceBetween>
        </Container>
      )}
    </SpaceBetween>
  );
}
