import { useEffect, useState, type ReactNode } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import FormField from "@cloudscape-design/components/form-field";
import Input from "@cloudscape-design/components/input";
import Modal from "@cloudscape-design/components/modal";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { usePlanGate } from "./PlanPanel";

export interface ConfirmModalProps {
  header: string;
  /** What happens, in a sentence or two. */
  children?: ReactNode;
  confirmLabel: string;
  /** When set, the user types this word (e.g. the cluster name) before the confirm button enables. */
  typeToConfirm?: string;
  /** A warning box above the content (destructive actions). */
  warning?: ReactNode;
  busy?: boolean;
  /** Messages from the last attempt (e.g. useMutation's errors). */
  errors?: string[];
  onConfirm: () => void;
  onCancel: () => void;
  /** Why the confirm button is disabled besides the plan (e.g. a field still invalid). */
  disabledReason?: string;
  /** Field paths the plan's refusal maps onto (see mapProblem); the caller shows them at its fields. */
  onPlanFieldErrors?: (fields: Record<string, string>) => void;
  planFields?: string[];
}

/** The one confirmation dialog: plain, or with a typed word for destructive actions. A plan inside it gates the
 * confirm button: disabled while the plan is computing or refused (the request would be). */
export function ConfirmModal({ header, children, confirmLabel, typeToConfirm, warning, busy, errors, onConfirm, onCancel, disabledReason, planFields, onPlanFieldErrors }: ConfirmModalProps) {
  const gate = usePlanGate();
  const [typed, setTyped] = useState("");
  const typedOk = typeToConfirm === undefined || typed === typeToConfirm;
  const why = disabledReason ?? gate.reason ?? (typedOk ? undefined : `Type ${typeToConfirm} to confirm.`);
  const ok = typedOk && !why;
  const planErrors = planFields ? gate.fieldErrors(planFields) : {};
  const planKey = JSON.stringify(planErrors);
  useEffect(() => {
    onPlanFieldErrors?.(planErrors);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [planKey]);
  const confirm = () => {
    if (ok && !busy) onConfirm();
  };
  return (
    <Modal
      visible
      onDismiss={onCancel}
      header={header}
      footer={
        <Box float="right">
          <SpaceBetween direction="horizontal" size="xs">
            <Button variant="link" onClick={onCancel}>
              Cancel
            </Button>
            <Button variant="primary" onClick={confirm} disabled={!ok} disabledReason={typedOk ? why : undefined} loading={busy}>
              {confirmLabel}
            </Button>
          </SpaceBetween>
        </Box>
      }
    >
      <SpaceBetween size="m">
        {warning && <Alert type="warning">{warning}</Alert>}
        <gate.Provider>{children}</gate.Provider>
        {errors && errors.length > 0 && <Alert type="error">{errors.join("; ")}</Alert>}
        {typeToConfirm !== undefined && (
          <form
            onSubmit={(e) => {
              e.preventDefault();
              confirm();
            }}
          >
            <FormField label={`To confirm, type ${typeToConfirm}`}>
              <Input value={typed} onChange={({ detail }) => setTyped(detail.value)} placeholder={typeToConfirm} ariaLabel={`Type ${typeToConfirm} to confirm`} autoFocus />
            </FormField>
          </form>
        )}
      </SpaceBetween>
    </Modal>
  );
}
