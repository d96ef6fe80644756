import { Suspense, lazy, useEffect, useState } from "react";
import AppLayout from "@cloudscape-design/components/app-layout";
import Box from "@cloudscape-design/components/box";
import Button from "@cloudscape-design/components/button";
import Flashbar from "@cloudscape-design/components/flashbar";
import SideNavigation from "@cloudscape-design/components/side-navigation";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import StatusIndicator from "@cloudscape-design/components/status-indicator";
import { SIGNED_IN_EVENT, clearToken, cognitoSignOutUrl, type AuthConfig } from "./auth";
import { LiveProvider, useLive } from "./lib/events";
import { FlashProvider, useFlash } from "./lib/flash";
import { hideToken } from "./lib/format";
import { MeProvider, identity, useMe } from "./lib/me";
import { href, navigate, useRoute, type Route } from "./lib/router";
import Clusters from "./pages/Clusters";

// The home page ships in the first chunk; the rest load on first visit.
const CreateCluster = lazy(() => import("./pages/CreateCluster"));
const ImportCluster = lazy(() => import("./pages/ImportCluster"));
const ClusterDetail = lazy(() => import("./pages/ClusterDetail"));
const Endpoints = lazy(() => import("./pages/Endpoints"));
const Operations = lazy(() => import("./pages/Operations"));
const OperationDetail = lazy(() => import("./pages/OperationDetail"));
const Audit = lazy(() => import("./pages/Audit"));
const JobDetail = lazy(() => import("./pages/JobDetail"));
const EndpointDetail = lazy(() => import("./pages/EndpointDetail"));

function LiveBadge() {
  const { state } = useLive();
  return (
    <StatusIndicator type={state === "live" ? "success" : state === "connecting" ? "loading" : "warning"}>
      {state === "live" ? "Live updates on" : state === "connecting" ? "Connecting live updates" : "Live updates off (polling)"}
    </StatusIndicator>
  );
}

function Page({ route }: { route: Route }) {
  switch (route.page) {
    case "clusters":
      return <Clusters />;
    case "create":
      return <CreateCluster />;
    case "import":
      return <ImportCluster key={`${route.region ?? ""}/${route.eks_cluster_name ?? ""}`} region={route.region} eksClusterName={route.eks_cluster_name} />;
    case "cluster":
      return <ClusterDetail key={`${route.region}/${route.name}`} region={route.region} name={route.name} />;
    case "job":
      return <JobDetail key={`${route.region}/${route.name}/${route.namespace}/${route.job}`} region={route.region} name={route.name} job={route.job} namespace={route.namespace} />;
    case "endpoints":
      return <Endpoints key={`${route.region}/${route.name}`} region={route.region} name={route.name} />;
    case "endpoint":
      return <EndpointDetail key={`${route.region}/${route.name}/${route.endpoint}`} region={route.region} name={route.name} endpoint={route.endpoint} />;
    case "operations":
      return <Operations cluster={route.cluster} status={route.status} />;
    case "operation":
      return <OperationDetail key={route.id} id={route.id} />;
    case "audit":
      return <Audit actor={route.actor} cluster={route.cluster} action={route.action} face={route.face} />;
    default:
      return (
        <Box variant="h1">
          Not found: <code>{hideToken(route.path)}</code>
        </Box>
      );
  }
}

function titleOf(route: Route): string {
  switch (route.page) {
    case "clusters":
      return "Clusters";
    case "create":
      return "Create cluster";
    case "import":
      return "Import cluster";
    case "cluster":
      return route.name;
    case "job":
      return `Job ${route.job}`;
    case "endpoints":
      return `Endpoints · ${route.name}`;
    case "endpoint":
      return `Endpoint ${route.endpoint}`;
    case "operations":
      return "Operations";
    case "operation":
      return `Operation ${route.id}`;
    case "audit":
      return "Audit";
    default:
      return "Not found";
  }
}

function Identity() {
  const { me } = useMe();
  if (!me) return null;
  return (
    <Box variant="span" color="text-body-secondary" data-testid="identity">
      Signed in as {identity(me)}
    </Box>
  );
}

function Shell({ config, onSignOut }: { config: AuthConfig; onSignOut: () => void }) {
  const route = useRoute();
  const flash = useFlash();
  useEffect(() => {
    document.title = `${titleOf(route)} · PodStart`;
  }, [route]);
  const active =
    route.page === "operations" || route.page === "operation"
      ? href.operations()
      : route.page === "audit"
        ? href.audit()
      : route.page === "import"
        ? href.import()
        : route.page === "create"
          ? href.create()
          : href.clusters();
  return (
    <>
      <a className="ps-skip" href="#main-content" onClick={(e) => { e.preventDefault(); document.getElementById("main-content")?.focus(); }}>
        Skip to main content
      </a>
      <AppLayout
        toolsHide
        ariaLabels={{ navigation: "Navigation", navigationClose: "Close navigation", navigationToggle: "Open navigation" }}
        notifications={<Flashbar items={flash.items} />}
        navigation={
          <SideNavigation
            header={{ text: "PodStart", href: href.clusters() }}
            activeHref={active}
            onFollow={(e) => {
              if (!e.detail.external) {
                e.preventDefault();
                navigate(e.detail.href);
              }
            }}
            items={[
              { type: "link", text: "Clusters", href: href.clusters() },
              { type: "link", text: "Create cluster", href: href.create() },
              { type: "link", text: "Import cluster", href: href.import() },
              { type: "link", text: "Operations", href: href.operations() },
              { type: "link", text: "Audit", href: href.audit() },
              { type: "divider" },
              { type: "link", text: "API (OpenAPI)", href: `${config.apiUrl}/v1/openapi.json`, external: true },
            ]}
          />
        }
        content={
          <main id="main-content" tabIndex={-1} className="ps-main">
            <SpaceBetween size="m">
              <div className="ps-topbar">
                <LiveBadge />
                <SpaceBetween direction="horizontal" size="xs" alignItems="center">
                  <Identity />
                  <Button variant="link" onClick={onSignOut}>
                    Sign out
                  </Button>
                </SpaceBetween>
              </div>
              <Suspense fallback={<Spinner size="large" />}>
                <Page route={route} />
              </Suspense>
            </SpaceBetween>
          </main>
        }
      />
    </>
  );
}

export default function App({ config, initiallySignedIn, SignIn }: { config: AuthConfig; initiallySignedIn: boolean; SignIn: React.ComponentType<{ config: AuthConfig; reason?: string; onSignedIn: () => void }> }) {
  const [signedIn, setSignedIn] = useState(initiallySignedIn);
  const [reason, setReason] = useState<string | undefined>();
  // One session per sign-in: a sign-in link for another user starts everything over as that user
  // (data, identity, the live feed's connection).
  const [session, setSession] = useState(0);
  useEffect(() => {
    const on = () => {
      setReason(undefined);
      setSignedIn(true);
      setSession((n) => n + 1);
    };
    window.addEventListener(SIGNED_IN_EVENT, on);
    return () => window.removeEventListener(SIGNED_IN_EVENT, on);
  }, []);
  useEffect(() => {
    const on = () => {
      clearToken();
      setReason("Your session is not valid (401). Sign in again.");
      setSignedIn(false);
    };
    window.addEventListener("podstart:unauthorized", on);
    return () => window.removeEventListener("podstart:unauthorized", on);
  }, []);
  if (!signedIn) return <SignIn config={config} reason={reason} onSignedIn={() => { setReason(undefined); setSignedIn(true); }} />;
  const signOut = () => {
    clearToken();
    if (config.auth === "cognito") window.location.assign(cognitoSignOutUrl(config));
    else setSignedIn(false);
  };
  return (
    <FlashProvider key={session}>
      <MeProvider>
        <LiveProvider url={config.wsUrl}>
          <Shell config={config} onSignOut={signOut} />
        </LiveProvider>
      </MeProvider>
    </FlashProvider>
  );
}
