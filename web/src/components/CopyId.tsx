import type { ReactNode } from "react";
import CopyToClipboard from "@cloudscape-design/components/copy-to-clipboard";

/** An id shown whole (never clipped) with a copy button: node ids, operation ids, ARNs. `children` replaces the
 * text (e.g. a link to the resource); the copy button still copies the id itself. */
export function CopyId({ value, label = "id", children }: { value: string; label?: string; children?: ReactNode }) {
  return (
    <span className="ps-id">
      {children ?? <span>{value}</span>}
      <CopyToClipboard
        variant="icon"
        textToCopy={value}
        copyButtonAriaLabel={`Copy ${label} ${value}`}
        copySuccessText={`${label} copied`}
        copyErrorText={`${label} not copied`}
      />
    </span>
  );
}
