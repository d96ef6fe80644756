import { useState } from "react";
import Alert from "@cloudscape-design/components/alert";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Container from "@cloudscape-design/components/container";
import Form from "@cloudscape-design/components/form";
import FormField from "@cloudscape-design/components/form-field";
import Header from "@cloudscape-design/components/header";
import Input from "@cloudscape-design/components/input";
import SpaceBetween from "@cloudscape-design/components/space-between";
import { cognitoAuthorizeUrl, setToken, type AuthConfig } from "../auth";

export default function SignIn({ config, reason, onSignedIn }: { config: AuthConfig; reason?: string; onSignedIn: () => void }) {
  const [token, setTok] = useState("");
  const [busy, setBusy] = useState(false);
  if (config.auth === "cognito") {
    return (
      <div className="ps-signin">
        <Container header={<Header variant="h1">Sign in to PodStart</Header>}>
          <SpaceBetween size="m">
            {reason && <Alert type="warning">{reason}</Alert>}
            <Button
              variant="primary"
              loading={busy}
              onClick={async () => {
                setBusy(true);
                window.location.assign(await cognitoAuthorizeUrl(config));
              }}
            >
              Sign in
            </Button>
          </SpaceBetween>
        </Container>
      </div>
    );
  }
  return (
    <div className="ps-signin">
      <form
        onSubmit={(e) => {
          e.preventDefault();
          if (!token.trim()) return;
          setToken(token);
          onSignedIn();
        }}
      >
        <Form
          header={<Header variant="h1" description="The sandbox prints a sign-in URL when it starts (make dev) and writes the token to .podstart/token.">Sign in to PodStart</Header>}
          actions={<Button variant="primary" formAction="submit">Sign in</Button>}
        >
          <Container>
            <SpaceBetween size="m">
              {reason && <Alert type="warning">{reason}</Alert>}
              <FormField label="Access token" description="Paste the token from .podstart/token. It is kept in this tab only.">
                <Input type="password" value={token} onChange={({ detail }) => setTok(detail.value)} autoComplete={false} autoFocus />
              </FormField>
              <Box variant="small" color="text-body-secondary">
                Or open the URL the sandbox printed: it signs you in directly.
              </Box>
            </SpaceBetween>
          </Container>
        </Form>
      </form>
    </div>
  );
}
