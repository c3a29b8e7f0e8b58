export interface Config {
  /** Rackside: bare-metal server maintenance from Backstage. */
  servers?: {
    /**
     * The Kubernetes clusters whose servers Rackside shows. Each entry uses
     * exactly one way in: `url` with a ServiceAccount token, `kubeconfigFile`,
     * or `inCluster`.
     */
    clusters?: Array<{
      /** Identifier used in routes and catalog annotations (lowercase, dashes). */
      name: string;
      /** Human-readable name shown on the Servers page. Defaults to `name`. */
      title?: string;
      /** The API server URL, e.g. https://10.0.0.1:6443. */
      url?: string;
      /** PEM CA bundle of the API server. */
      caData?: string;
      /** Path to a PEM CA bundle of the API server. */
      caFile?: string;
      /** Skip TLS verification of the API server. Never in production. */
      skipTLSVerify?: boolean;
      /**
       * ServiceAccount token of the Rackside Backstage identity.
       * @visibility secret
       */
      serviceAccountToken?: string;
      /** Path to a file holding the ServiceAccount token (re-read on start). */
      serviceAccountTokenFile?: string;
      /** Path to a kubeconfig file, instead of url and token. */
      kubeconfigFile?: string;
      /** Context to use from kubeconfigFile; defaults to its current context. */
      kubeconfigContext?: string;
      /** Use the pod's in-cluster ServiceAccount. */
      inCluster?: boolean;
      /**
       * Namespace where the Rackside operator runs. Defaults to rackside-system.
       * The TalosClusters, TalosMachines and MachineReclaims Rackside reads are
       * those of this namespace, and reclaim credentials are stored here.
       */
      operatorNamespace?: string;
      /**
       * The cluster's Alertmanager (docs/alerts.md). With it, the Servers page shows each
       * node's firing alerts (read at most every 30 s, one request per cluster) and the
       * plan dialog offers an alert gate. Give the operator the same URL and matchers
       * (the chart's operator.alertmanager).
       */
      alertmanager?: {
        /** Its URL, e.g. https://alertmanager.monitoring:9093 (API v2 under /api/v2). */
        url: string;
        /** PEM CA bundle of its certificate. */
        caData?: string;
        /** Path to a PEM CA bundle of its certificate. */
        caFile?: string;
        /**
         * Bearer token.
         * @visibility secret
         */
        token?: string;
        /** Path to a file holding the bearer token, read on every request. */
        tokenFile?: string;
        /**
         * Templates selecting a node's alerts; an alert is the node's when any one
         * matches. `{{node}}` is the node's name, `{{labels.KEY}}` one of its labels.
         * Defaults to node="{{node}}" and instance=~"{{node}}(:[0-9]+)?".
         */
        matchers?: string[];
      };
    }>;
    /**
     * How the reason given with every server action is checked. The backend
     * refuses (400) a reason that does not pass, before anything is written.
     */
    reasonPolicy?: {
      /** Fewest characters (after trimming). Defaults to 10. */
      minLength?: number;
      /** Most characters (after trimming). Defaults to 500. */
      maxLength?: number;
      /**
       * A regular expression the reason must contain a match of, e.g. a
       * ticket reference `[A-Z]+-[0-9]+`. RE2 syntax (no back-references or
       * look-arounds), at most 1,024 characters; the backend refuses to start
       * with one it cannot compile. No pattern by default.
       */
      pattern?: string;
      /**
       * Shown to the user when the reason does not match `pattern`, e.g.
       * "mention the ticket, like OPS-123".
       */
      hint?: string;
    };
    /**
     * How long, in milliseconds, a user's read decisions (`servers:read` and
     * each action's permission, which decide what a list offers) are reused
     * for that user's next reads. A Servers page asks the clusters, then a
     * window of servers, then more as the user scrolls: within this time they
     * share one round trip to the permission framework. Actions are always
     * authorized afresh, so a revoked permission stops them at once and stops
     * reads within this time. Defaults to 2000; 0 asks for every read.
     */
    readDecisionReuseMs?: number;
    /**
     * What requests through the Backstage actions registry (MCP clients, agents) may
     * do on their own. The top rungs of the ceremony ladder ask a person to type the
     * node's name, which an agent can type as easily as anything else: by default a
     * reboot or shutdown (typed-name rung) and anything at the hazard rung (the last
     * quorum margin) are refused (403) with a message that a person must do it in the
     * portal. Every attempt is audited with `via: actions` and the caller's principal.
     */
    actions?: {
      /**
       * Let agents request reboot, shutdown, a Talos upgrade and a firmware update (the
       * typed-name rung) through the actions registry, with the same permission, guard,
       * allowed sources and pre-flight checks as the portal. Defaults to false.
       */
      allowPowerVerbs?: boolean;
      /**
       * Let agents request actions at the hazard rung (consuming the last quorum
       * margin). Needs allowPowerVerbs as well. Defaults to false.
       */
      allowHazard?: boolean;
      /**
       * Let agents drain (and reboot or shut down, which drain first) with the drain
       * options that lose data: force (pods no controller recreates are deleted) and
       * deleteEmptyDirData (emptyDir data is lost). Off, the actions do not offer them
       * and a call that sets them is refused, naming them. The caller still needs
       * servers:drain-data. Defaults to false.
       */
      allowDataLossDrain?: boolean;
    };
    /**
     * Approvals (`docs/approvals.md`): a second person's approval before a request acts.
     * Without rules nothing is held. A request (a server action that creates a
     * maintenance, or a plan) that a rule selects is created held: its
     * `spec.approval` names the rule, the approvers and when the approval expires, and
     * the operator touches nothing until someone named there, holding `servers:approve`
     * on every node of the request and other than the requester, approves it with a
     * fresh pre-flight. The backend refuses to start with a rule it cannot read, naming
     * the rule and the field.
     */
    approvals?: {
      /** The rules, in order: the first that selects a request holds it. */
      rules?: Array<{
        /** Unique, lowercase letters, digits and dashes; shown to users. */
        name: string;
        /**
         * Which requests it holds: every key given must match (an empty or absent
         * select holds every request).
         */
        select?: {
          /**
           * The actions: cordon, drain, reboot, shutdown, upgrade, firmware (a server
           * action that creates a maintenance), power-on, and plan (a maintenance plan).
           */
          actions?: string[];
          /**
           * The intents of the maintenance or plan: cordon, drain, reboot, shutdown,
           * upgrade, firmware.
           */
          intents?: string[];
          /**
           * The lowest ceremony rung held: reason, preflight, typed-name or hazard (a
           * plan: its highest step's rung).
           */
          rungAtLeast?: 'reason' | 'preflight' | 'typed-name' | 'hazard';
          /** Labels every pair of which a node of the request carries. */
          nodeLabels?: { [name: string]: string };
          /** A node of the request has one of these roles. */
          roles?: Array<'control-plane' | 'worker'>;
          /** Plans of at least this many servers (plans only). */
          planSizeAtLeast?: number;
        };
        /**
         * Who may approve, as catalog refs: `user:default/alice`,
         * `group:default/platform-oncall` (a member of the group, through the
         * catalog's ownership refs). At most 50.
         */
        approvers: string[];
        /** How long the approval may wait, in minutes. Defaults to 240. */
        expiresAfterMinutes?: number;
      }>;
    };
    /**
     * What an upgrade or a firmware update may install (`docs/upgrades.md`, "Allowing
     * sources"). Nothing is allowed by default: without a list the backend refuses
     * every upgrade (or firmware update) with 400, naming the empty list. Give the
     * operator the same lists (its --talos-image-prefixes and --firmware-sources; the
     * chart's operator.talosImagePrefixes): it refuses anything outside its own at the
     * moment it acts, whoever wrote the request. The backend refuses to start with an
     * entry it cannot read, naming it.
     */
    upgrades?: {
      /**
       * Talos installer image prefixes, e.g. `factory.talos.dev/installer/` (any
       * schematic's installer) or `ghcr.io/siderolabs/installer:` (any tag of that one
       * repository). A prefix names a registry host exactly and whole repository path
       * components: `ghcr.io/siderolabs/` never allows `ghcr.io.evil.example/...` nor
       * `ghcr.io/siderolabs-evil/...`.
       */
      talosImages?: string[];
      /**
       * The https origins a BMC may fetch firmware images from (scheme, host and
       * port, nothing else), e.g. `https://firmware.plant.example`. An image URI is
       * allowed only when its origin is exactly one of these; user info, backslashes,
       * percent-encoded or non-ASCII hosts are refused outright. An entry may be an
       * object `{origin, checksumRequired: true}`: a request for an image from that
       * origin without `checksum` (sha256:<64 hex>) is refused with 400.
       */
      firmwareSources?: Array<
        string | { origin: string; checksumRequired?: boolean }
      >;
    };
    /** Maintenance plans (`docs/plans.md`). */
    plans?: {
      /**
       * How long a plan's authority lasts, in hours, from its creation or its last
       * renewal: the backend checks the requester's permissions when the plan is
       * made, and no step starts after this lease ends until someone who may act on
       * the remaining servers renews it from the plan page. Defaults to 8; at most 24.
       */
      authorizationHours?: number;
      /**
       * How many plan pre-flights one user may ask in any minute (a plan request
       * takes one too); beyond it the answer is 429 with Retry-After. A plan
       * pre-flight lists every claim, PersistentVolume and VirtualMachineInstance
       * of the cluster once (pods come from a watch cache). Defaults to 20.
       */
      preflightsPerMinute?: number;
    };
    /**
     * Pre-flight acknowledgements (drain, reboot, shutdown). A pre-flight token
     * binds the impact the user was shown, for that user, for 15 minutes, and
     * acknowledges one request (a second one with it is a 409).
     */
    preflight?: {
      /**
       * Key that signs pre-flight tokens. Set the same value on every replica
       * of the backend; without it each process makes a random key, so a
       * token is only accepted by the replica that issued it (and not after
       * a restart), and the backend warns at start-up.
       * @visibility secret
       */
      secret?: string;
    };
    /**
     * What Rackside tells people through the notifications plugin
     * (`@backstage/plugin-notifications-backend` must be installed): the requester
     * when a maintenance ends Complete, Refused or Failed, when its drain has been
     * blocked by a PodDisruptionBudget for longer than `blockedAfter`, and when a
     * reclaim ends Done, Failed or Expired; the owners of the catalog entities whose
     * pods (labelled `backstage.io/kubernetes-id`) a drain evicts, when it starts.
     */
    notifications?: {
      /** Send them. Defaults to true. */
      enabled?: boolean;
      /**
       * How long a PodDisruptionBudget may block a drain before the requester is
       * told: a duration string (`10m`, `90s`, ISO `PT10M`) or an object
       * (`{ minutes: 10 }`). Defaults to 10 minutes.
       */
      blockedAfter?:
        | string
        | {
            milliseconds?: number;
            seconds?: number;
            minutes?: number;
            hours?: number;
            days?: number;
            weeks?: number;
          };
    };
  };
}
