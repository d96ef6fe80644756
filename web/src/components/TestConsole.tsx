// The endpoint test console: a request built from a template for the engine (chat or completion), editable as
// JSON, sent through PodStart's invoke (the target is the endpoint's own Service); the answer with its latency and
// tokens in and out, the response JSON, and the same request as a curl command against the endpoint's real URL
// (or through PodStart's API when the endpoint has no address of its own).
import { useEffect, useRef, useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import ColumnLayout from "@cloudscape-design/components/column-layout";
import Container from "@cloudscape-design/components/container";
import CopyToClipboard from "@cloudscape-design/components/copy-to-clipboard";
import ExpandableSection from "@cloudscape-design/components/expandable-section";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import KeyValuePairs from "@cloudscape-design/components/key-value-pairs";
import SegmentedControl from "@cloudscape-design/components/segmented-control";
import Select from "@cloudscape-design/components/select";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Textarea from "@cloudscape-design/components/textarea";
import { apiBase, api } from "../api/client";
import type { Endpoint, InvokeRequest, InvokeResult } from "../api/types";
import { jsonView, text } from "../lib/format";
import { canMutate, useMe } from "../lib/me";
import { useMutation } from "../lib/mutation";
import { validate } from "../lib/validate";
import { CopyId } from "./CopyId";

export type Template = "chat" | "completion";

export const PATHS: Record<Template, string> = { chat: "/v1/chat/completions", completion: "/v1/completions" };

/** The request body of a template: the engine's OpenAI-compatible shape, without the model (PodStart adds the
 * endpoint's own). */
export function templateBody(t: Template, message: string, maxTokens: number, temperature: number): InvokeRequest {
  return t === "chat"
    ? { messages: [{ role: "user", content: message }], max_tokens: maxTokens, temperature, stream: false }
    : ({ prompt: message, max_tokens: maxTokens, temperature, stream: false } as InvokeRequest);
}

const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The same request as curl: straight to the endpoint's URL (the engine's path, the served model name, the API key
 * header when one is required), or through PodStart's invoke route when it has no address of its own. */
export function curlOf(ep: Pick<Endpoint, "name" | "cluster" | "region" | "url" | "model" | "api_key_required" | "mode">, body: Record<string, unknown>, template: Template, via: "direct" | "podstart", base = apiBase()): string {
  if (via === "direct" && ep.url) {
    const direct = { model: ep.model, ...body };
    return [
      `curl -sS -X POST ${shellQuote(`${ep.url}${PATHS[template]}`)}`,
      `  -H 'Content-Type: application/json'`,
      ...(ep.api_key_required ? [`  -H "Authorization: Bearer $API_KEY"`] : []),
      `  -d ${shellQuote(JSON.stringify(direct))}`,
    ].join(" \\\n");
  }
  const url = `${base}/v1/clusters/${encodeURIComponent(ep.cluster)}/endpoints/${encodeURIComponent(ep.name)}/invoke?region=${encodeURIComponent(ep.region)}`;
  return [
    `curl -sS -X POST ${shellQuote(url)}`,
    `  -H "Authorization: Bearer $PODSTART_TOKEN"`,
    `  -H 'Content-Type: application/json'`,
    `  -d ${shellQuote(JSON.stringify(body))}`,
  ].join(" \\\n");
}

function usageOf(r: InvokeResult): { in?: number; out?: number } {
  const u = ((r.response ?? {}) as { usage?: { prompt_tokens?: number; completion_tokens?: number } }).usage;
  return { in: u?.prompt_tokens, out: u?.completion_tokens };
}

export function TestConsole({ cluster, region, endpoints, fixed }: {
  cluster: string;
  region: string;
  endpoints: Endpoint[];
  /** The endpoint page: the console tests this one endpoint (no chooser). */
  fixed?: boolean;
}) {
  const ready = endpoints.filter((x) => x.status === "READY");
  const [chosenName, setChosenName] = useState("");
  const ep = fixed ? endpoints[0] : ready.find((x) => x.name === chosenName) ?? ready[0];
  const [template, setTemplate] = useState<Template>("chat");
  const [message, setMessage] = useState("");
  const [maxTokens, setMaxTokens] = useState("256");
  const [temperature, setTemperature] = useState("0.7");
  const [json, setJson] = useState("");
  const [jsonEdited, setJsonEdited] = useState(false);
  const [answer, setAnswer] = useState<{ result: InvokeResult; ms: number; template: Template } | undefined>();
  const [via, setVia] = useState<"direct" | "podstart">("direct");
  const started = useRef(0);
  const { me } = useMe();
  const viewer = me && !canMutate(me) ? `Only operators and admins send requests to endpoints (you are ${me.role}).` : undefined;

  const fromFields = templateBody(template, message, Number(maxTokens), Number(temperature));
  useEffect(() => {
    if (!jsonEdited) setJson(JSON.stringify(fromFields, null, 2));
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [template, message, maxTokens, temperature, jsonEdited]);
  let parsed: Record<string, unknown> | undefined;
  let jsonError: string | undefined;
  try {
    const v = JSON.parse(json || "{}");
    if (v && typeof v === "object" && !Array.isArray(v)) parsed = v as Record<string, unknown>;
    else jsonError = "The request body is a JSON object.";
  } catch (e) {
    jsonError = `Not JSON: ${(e as Error).message}`;
  }
  const schemaErrors = parsed ? validate("InvokeRequest", parsed) : {};
  const empty = parsed && !("messages" in parsed) && !("prompt" in parsed) ? "The body needs messages (chat) or a prompt (completion)." : undefined;
  const problem = jsonError ?? empty ?? (Object.keys(schemaErrors).length ? Object.entries(schemaErrors).map(([k, v]) => `${k}: ${v}`).join("; ") : undefined);
  const usedTemplate: Template = parsed && "prompt" in parsed ? "completion" : "chat";

  const invoke = useMutation(
    (body: Record<string, unknown>, key: string) => api.invokeEndpoint(cluster, region, ep!.name, body as InvokeRequest, key),
    { fields: ["messages", "prompt", "max_tokens", "temperature"], onDone: (r) => setAnswer({ result: r, ms: Math.round(performance.now() - started.current), template: usedTemplate }) },
  );
  const send = () => {
    if (!parsed || problem || !ep) return;
    setAnswer(undefined);
    started.current = performance.now();
    void invoke.run(parsed);
  };
  const why = !ep ? (fixed ? "The endpoint is not ready." : "No endpoint is ready.") : viewer ?? (!message.trim() && !jsonEdited ? "Type a message first." : problem);
  const curl = ep && parsed ? curlOf(ep, parsed, usedTemplate, via) : "";
  const usage = answer ? usageOf(answer.result) : {};
  const serverMs = answer?.result.latency_ms;
  return (
    <Container
      data-testid="test-console"
      header={
        <Header variant="h2" description={fixed ? "Send a request to this endpoint through PodStart and read the engine's answer" : "Send a request to a ready endpoint (operators)"}>
          Test console
        </Header>
      }
    >
      <SpaceBetween size="l">
        {!fixed && (
          <FormField label="Endpoint">
            <Select
              ariaLabel="Endpoint"
              selectedOption={ep ? { value: ep.name, label: `${ep.name} (${ep.model})` } : null}
              options={ready.map((x) => ({ value: x.name, label: `${x.name} (${x.model})` }))}
              placeholder={ready.length ? "Choose" : "No endpoint is ready"}
              onChange={({ detail }) => setChosenName(detail.selectedOption.value ?? "")}
            />
          </FormField>
        )}
        {ep && (
          <KeyValuePairs
            columns={2}
            items={[
              { label: "Endpoint URL", value: <span data-testid="endpoint-url">{ep.url ? <CopyId value={ep.url} label="URL" /> : ep.mode === "managed" ? "None of its own: call it through PodStart (invoke) or its SageMaker endpoint" : "Not yet: the load balancer has no address"}</span> },
              { label: "How to call it", value: text(ep.how_to_call) },
            ]}
          />
        )}
        <ColumnLayout columns={2}>
          <SpaceBetween size="m">
            <SegmentedControl
              label="Template"
              selectedId={template}
              onChange={({ detail }) => { setTemplate(detail.selectedId as Template); setJsonEdited(false); }}
              options={[{ id: "chat", text: `Chat (${PATHS.chat})` }, { id: "completion", text: `Completion (${PATHS.completion})` }]}
            />
            <FormField label={template === "chat" ? "Message" : "Prompt"} errorText={invoke.fieldErrors.messages ?? invoke.fieldErrors.prompt}>
              <Textarea ariaLabel={template === "chat" ? "Message" : "Prompt"} rows={3} value={message}
                onChange={({ detail }) => { setMessage(detail.value); setJsonEdited(false); invoke.clearField("messages", "prompt"); }} />
            </FormField>
            <SpaceBetween direction="horizontal" size="m">
              <FormField label="Max tokens" errorText={schemaErrors.max_tokens ?? invoke.fieldErrors.max_tokens}>
                <Input ariaLabel="Max tokens" type="number" inputMode="numeric" value={maxTokens} onChange={({ detail }) => { setMaxTokens(detail.value); setJsonEdited(false); }} />
              </FormField>
              <FormField label="Temperature" errorText={schemaErrors.temperature ?? invoke.fieldErrors.temperature}>
                <Input ariaLabel="Temperature" type="number" inputMode="decimal" value={temperature} onChange={({ detail }) => { setTemperature(detail.value); setJsonEdited(false); }} />
              </FormField>
            </SpaceBetween>
          </SpaceBetween>
          <FormField label="Request body (JSON)" description="What PodStart sends to the engine (it adds the endpoint's model name). Edit it freely." errorText={jsonError ?? empty}>
            <Textarea ariaLabel="Request body (JSON)" rows={10} value={json} onChange={({ detail }) => { setJson(detail.value); setJsonEdited(true); }} spellcheck={false} />
          </FormField>
        </ColumnLayout>
        <SpaceBetween direction="horizontal" size="xs">
          <Button variant="primary" onClick={send} loading={invoke.busy} disabled={!!why} disabledReason={why}>Send</Button>
          {jsonEdited && <Button onClick={() => setJsonEdited(false)}>Reset the body from the template</Button>}
        </SpaceBetween>
        {invoke.errors.length > 0 && <Alert type="error" header="No answer">{invoke.errors.join("; ")}</Alert>}
        {answer && (
          <SpaceBetween size="m">
            <KeyValuePairs
              columns={4}
              items={[
                { label: "Status", value: <span data-testid="answer-status">{`HTTP ${answer.result.status}`}</span> },
                { label: "Latency", value: <span data-testid="answer-latency">{`${answer.ms} ms${serverMs !== undefined && serverMs !== null ? ` (engine ${serverMs} ms)` : ""}`}</span> },
                { label: "Tokens in / out", value: <span data-testid="answer-tokens">{`${text(usage.in, "unknown")} / ${text(usage.out, "unknown")}`}</span> },
                { label: "Model", value: text(answer.result.model, "unknown") },
              ]}
            />
            <Box data-testid="answer">
              <Box variant="awsui-key-label">{`${answer.result.endpoint} answered${answer.result.model ? ` (${answer.result.model})` : ""}${answer.result.truncated ? ", truncated" : ""}`}</Box>
              <Box variant="p">{text(answer.result.content, "The engine sent no content.")}</Box>
            </Box>
            <ExpandableSection headerText="Response (JSON)" defaultExpanded>
              <pre className="ps-pre" data-testid="answer-json">{jsonView(answer.result.response ?? {})}</pre>
            </ExpandableSection>
          </SpaceBetween>
        )}
        {ep && parsed && (
          <SpaceBetween size="s">
            <Header
              variant="h3"
              description={via === "direct" && ep.url ? "Straight to the endpoint's own address (from inside its network)" : "Through PodStart's API, with your PodStart token"}
              actions={
                <SpaceBetween direction="horizontal" size="xs">
                  {ep.url && (
                    <SegmentedControl
                      label="Call"
                      selectedId={via}
                      onChange={({ detail }) => setVia(detail.selectedId as "direct" | "podstart")}
                      options={[{ id: "direct", text: "Endpoint URL" }, { id: "podstart", text: "Through PodStart" }]}
                    />
                  )}
                  <CopyToClipboard variant="button" textToCopy={curl} copyButtonText="Copy as curl" copySuccessText="curl command copied" copyErrorText="curl command not copied" />
                </SpaceBetween>
              }
            >
              curl
            </Header>
            <pre className="ps-pre" data-testid="curl">{curl}</pre>
          </SpaceBetween>
        )}
      </SpaceBetween>
    </Container>
  );
}
