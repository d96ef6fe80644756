import { StrictMode } from "react";
import { createRoot } from "react-dom/client";
import "@cloudscape-design/global-styles/index.css";
import { Mode, applyMode } from "@cloudscape-design/global-styles";
import "./styles.css";
import App from "./App";
import SignIn from "./pages/SignIn";
import { configureApi } from "./api/client";
import { captureTokenFromUrl, completeCognitoSignIn, getToken, loadConfig, watchTokenLinks } from "./auth";

/** Dark mode follows the system setting, live (Cloudscape's visual modes). */
function followColorScheme() {
  const dark = window.matchMedia?.("(prefers-color-scheme: dark)");
  const apply = () => applyMode(dark?.matches ? Mode.Dark : Mode.Light);
  apply();
  dark?.addEventListener?.("change", apply);
}

async function start() {
  followColorScheme();
  // Take a sandbox token out of the address bar before anything else reads the URL.
  captureTokenFromUrl();
  // ... and out of every later link opened in this tab (registered before the router's listener).
  watchTokenLinks();
  const config = await loadConfig();
  configureApi({ apiUrl: config.apiUrl, onUnauthorized: () => window.dispatchEvent(new Event("podstart:unauthorized")) });
  let signInError: string | undefined;
  if (config.auth === "cognito") {
    try {
      await completeCognitoSignIn(config);
    } catch (e) {
      signInError = (e as Error).message;
    }
  }
  if (signInError) console.warn(signInError);
  createRoot(document.getElementById("root")!).render(
    <StrictMode>
      <App config={config} initiallySignedIn={!!getToken()} SignIn={SignIn} />
    </StrictMode>,
  );
}

void start();
