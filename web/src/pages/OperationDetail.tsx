import { useState } from "react";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import Header from "@cloudscape-design/components/header";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import Link from "@cloudscape-design/components/link";
import SpaceBetween from "@cloudscape-design/components/space-between";
import type { Operation } from "../api/types";
import { ProgressPanel } from "../components/ProgressPanel";
import { CopyId } from "../components/CopyId";
import { jsonView, text } from "../lib/format";
import { resourceLink } from "../lib/links";
import { operationTitle } from "../lib/operation";
import { href } from "../lib/router";
import { Time } from "../lib/time";

export default function OperationDetail({ id }: { id: string }) {
  const [op, setOp] = useState<Operation | null>(null);
  const cluster = op?.target?.cluster;
  const region = op?.target?.region;
  const back = op ? resourceLink(op) : undefined;
  return (
    <SpaceBetween size="l">
      <Header
        variant="h1"
        description={op ? `${operationTitle(op)} (${op.kind})` : undefined}
        actions={back && <Button href={back.href} data-testid="operation-back" iconName="arrow-left">{back.text}</Button>}
      >
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
                { label: "Acted on", value: back ? <Link href={back.href}>{back.text.replace(/^View /, "")}</Link> : text(op.target?.resource ?? cluster) },
                { label: "Started", value: <Time value={op.created_at} /> },
                { label: "Updated", value: <Time value={op.updated_at} /> },
                { label: "Attempt", value: text(op.attempt ?? 1) },
                { label: "Started by", value: text(op.principal?.name ?? op.principal?.sub) },
                { label: "Idempotency key", value: op.idempotency_key ? <CopyId value={op.idempotency_key} label="idempotency key" /> : text(op.idempotency_key) },
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
