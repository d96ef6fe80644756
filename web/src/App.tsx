import { Fragment, Suspense, lazy, useEffect, useState } from "react";
import AppLayout from "@cloudscape-design/components/app-layout";
import Box from "@cloudscape-design/components/box";
import BreadcrumbGroup, { type BreadcrumbGroupProps } from "@cloudscape-design/components/breadcrumb-group";
import Button from "@cloudscape-design/components/button";
import Flashbar from "@cloudscape-design/components/flashbar";
import SideNavigation from "@cloudscape-design/components/side-navigation";
import SpaceBetween from "@cloudscape-design/components/space-between";
import Spinner from "@cloudscape-design/components/spinner";
import { Status } from "./components/Status";
import { SIGNED_IN_EVENT, clearToken, cognitoSignOutUrl, type AuthConfig } from "./auth";
import { LiveProvider, useLive } from "./lib/events";
import { FlashProvider, useFlash } from "./lib/flash";
import { hideToken } from "./lib/format";
import { MeProvider, identity, useMe } from "./lib/me";
import { href, navigate, useRoute, type ClusterTab, type Route } from "./lib/router";
import Clusters from "./pages/Clusters";

// The home page ships in the first chunk; the rest load on first visit.
const CreateCluster = lazy(() => import("./pages/CreateCluster"));
const ImportCluster = lazy(() => import("./pages/ImportCluster"));
const ClusterDetail = lazy(() => import("./pages/ClusterDetail"));
const Operations = lazy(() => import("./pages/Operations"));
const OperationDetail = lazy(() => import("./pages/OperationDetail"));
const Audit = lazy(() => import("./pages/Audit"));
const JobDetail = lazy(() => import("./pages/JobDetail"));
const EndpointDetail = lazy(() => import("./pages/EndpointDetail"));
const AllJobs = lazy(() => import("./pages/AllJobs"));
const AllEndpoints = lazy(() => import("./pages/AllEndpoints"));
const Settings = lazy(() => import("./pages/Settings"));

function LiveBadge() {
  const { state } = useLive();
  return (
    <Status type={state === "live" ? "success" : state === "connecting" ? "loading" : "warning"}>
      {state === "live" ? "Live updates on" : state === "connecting" ? "Connecting live updates" : "Live updates off (polling)"}
    </Status>
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
      return <ClusterDetail key={`${route.region}/${route.name}`} region={route.region} name={route.name} tab={route.tab} />;
    case "job":
      return <JobDetail key={`${route.region}/${route.name}/${route.namespace}/${route.job}`} region={route.region} name={route.name} job={route.job} namespace={route.namespace} />;
    case "endpoint":
      return <EndpointDetail key={`${route.region}/${route.name}/${route.endpoint}`} region={route.region} name={route.name} endpoint={route.endpoint} />;
    case "jobs":
      return <AllJobs cluster={route.cluster} region={route.region} />;
    case "endpoints":
      return <AllEndpoints cluster={route.cluster} region={route.region} />;
    case "operations":
      return <Operations cluster={route.cluster} status={route.status} />;
    case "operation":
      return <OperationDetail key={route.id} id={route.id} />;
    case "audit":
      return <Audit actor={route.actor} cluster={route.cluster} action={route.action} face={route.face} />;
    case "settings":
      return <Settings />;
    default:
      return (
        <SpaceBetween size="s">
          <Box variant="h1">Not found</Box>
          <Box>
            No page at <code>{hideToken(route.path)}</code>. <a href={href.clusters()}>Go to Clusters</a>.
          </Box>
        </SpaceBetween>
      );
  }
}

const TAB_TITLE: Record<ClusterTab, string> = {
  details: "Details", groups: "Instance groups", nodes: "Nodes", storage: "Storage", jobs: "Jobs", endpoints: "Endpoints",
  namespaces: "Namespaces", features: "Add-ons", events: "Events", operations: "Operations",
};

export function titleOf(route: Route): string {
  switch (route.page) {
    case "clusters": return "Clusters";
    case "create": return "Create cluster";
    case "import": return "Import cluster";
    case "cluster": return route.tab === "details" ? route.name : `${TAB_TITLE[route.tab]} · ${route.name}`;
    case "job": return `Job ${route.job}`;
    case "endpoint": return `Endpoint ${route.endpoint}`;
    case "jobs": return "Jobs";
    case "endpoints": return "Endpoints";
    case "operations": return "Operations";
    case "operation": return `Operation ${route.id}`;
    case "audit": return "Audit";
    case "settings": return "Settings";
    default: return "Not found";
  }
}

/** Breadcrumbs for every page, from its route: where it sits, each level a link. */
export function breadcrumbs(route: Route): BreadcrumbGroupProps.Item[] {
  const clusters = { text: "Clusters", href: href.clusters() };
  const cluster = (region: string, name: string) => ({ text: name, href: href.cluster(region, name) });
  switch (route.page) {
    case "clusters": return [clusters];
    case "create": return [clusters, { text: "Create cluster", href: href.create() }];
    case "import": return [clusters, { text: "Import cluster", href: href.import() }];
    case "cluster":
      return route.tab === "details"
        ? [clusters, cluster(route.region, route.name)]
        : [clusters, cluster(route.region, route.name), { text: TAB_TITLE[route.tab], href: href.cluster(route.region, route.name, route.tab) }];
    case "job":
      return [clusters, cluster(route.region, route.name), { text: "Jobs", href: href.cluster(route.region, route.name, "jobs") },
        { text: route.job, href: href.job(route.region, route.name, route.job, route.namespace) }];
    case "endpoint":
      return [clusters, cluster(route.region, route.name), { text: "Endpoints", href: href.endpoints(route.region, route.name) },
        { text: route.endpoint, href: href.endpoint(route.region, route.name, route.endpoint) }];
    case "jobs": return [{ text: "Jobs", href: href.allJobs() }];
    case "endpoints": return [{ text: "Endpoints", href: href.allEndpoints() }];
    case "operations": return [{ text: "Operations", href: href.operations() }];
    case "operation": return [{ text: "Operations", href: href.operations() }, { text: route.id, href: href.operation(route.id) }];
    case "audit": return [{ text: "Audit", href: href.audit() }];
    case "settings": return [{ text: "Settings", href: href.settings() }];
    default: return [clusters];
  }
}

function activeHref(route: Route): string {
  switch (route.page) {
    case "job": case "jobs": return href.allJobs();
    case "endpoint": case "endpoints": return href.allEndpoints();
    case "operations": case "operation": return href.operations();
    case "audit": return href.audit();
    case "settings": return href.settings();
    default: return href.clusters();
  }
}

function Identity() {
  const { me } = useMe();
  if (!me) return null;
  return (
    <Box variant="span" color="text-body-secondary" data-testid="identity">
      Signed in as <a href={href.settings()}>{identity(me)}</a>
    </Box>
  );
}

function Shell({ config, onSignOut }: { config: AuthConfig; onSignOut: () => void }) {
  const route = useRoute();
  const flash = useFlash();
  const [navOpen, setNavOpen] = useState(() => window.innerWidth >= 1000);
  useEffect(() => {
    document.title = `${titleOf(route)} · PodStart`;
  }, [route]);
  const follow = (e: CustomEvent<{ href: string; external?: boolean }>) => {
    if (!e.detail.external) {
      e.preventDefault();
      navigate(e.detail.href);
    }
  };
  return (
    <>
      <a className="ps-skip" href="#main-content" onClick={(e) => { e.preventDefault(); document.getElementById("main-content")?.focus(); }}>
        Skip to main content
      </a>
      <AppLayout
        toolsHide
        navigationOpen={navOpen}
        onNavigationChange={({ detail }) => setNavOpen(detail.open)}
        ariaLabels={{ navigation: "Navigation", navigationClose: "Close navigation", navigationToggle: "Open navigation", notifications: "Notifications" }}
        notifications={<Flashbar items={flash.items}
          i18nStrings={{ ariaLabel: "Notifications", notificationBarText: "Notifications", notificationBarAriaLabel: "View all notifications",
            errorIconAriaLabel: "Error", successIconAriaLabel: "Success", warningIconAriaLabel: "Warning", infoIconAriaLabel: "Info", inProgressIconAriaLabel: "In progress" }} />}
        breadcrumbs={<BreadcrumbGroup items={breadcrumbs(route)} ariaLabel="Breadcrumbs" expandAriaLabel="Show path" onFollow={follow} />}
        navigation={
          <SideNavigation
            header={{ text: "PodStart", href: href.clusters() }}
            activeHref={activeHref(route)}
            onFollow={follow}
            items={[
              { type: "link", text: "Clusters", href: href.clusters() },
              { type: "link", text: "Jobs", href: href.allJobs() },
              { type: "link", text: "Endpoints", href: href.allEndpoints() },
              { type: "link", text: "Operations", href: href.operations() },
              { type: "link", text: "Audit", href: href.audit() },
              { type: "link", text: "Settings", href: href.settings() },
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
  // (data, identity, the live feed's connection, the flashbar).
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
    <Fragment key={session}>
      <MeProvider>
        <LiveProvider url={config.wsUrl}>
          <FlashProvider>
            <Shell config={config} onSignOut={signOut} />
          </FlashProvider>
        </LiveProvider>
      </MeProvider>
    </Fragment>
  );
}
