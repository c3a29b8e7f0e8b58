// Firmware updates for the rack's Redfish BMCs: the UpdateService, TaskService and
// FirmwareInventory that lib/redfishHealth.mjs serves in front of sushy-tools (whose fake
// driver has none), shaped as the DMTF UpdateService, Task and SoftwareInventory schemas say.
//
//   const updates = createUpdateService({ systems });
//   updates.get(path)                      -> {status, headers?, body} or undefined
//   updates.post(path, contentType, body)  -> {status, headers?, body} or undefined
//   updates.afterReset(systemId)           a ComputerSystem.Reset went through: apply
//   updates.control(method, path, json)    -> {status, body} or undefined
//   updates.serviceRootLinks()             what the service root links (UpdateService, TaskService)
//   updates.stop()                         clears the task timers
//
// The inventory: one for the proxy, `BIOS` (2.4.1, Updateable) and `BMC` (1.12.0, not
// Updateable). The operator reads one FirmwareInventory per BMC address (the service root's
// UpdateService), and every rack system shares the proxy's address, so an update changes what
// every system reports. A per-system inventory needs a BMC address per system.
//
// Updating:
// * POST /redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate
//   {ImageURI, TransferProtocol?: "HTTPS", Targets?: [...], "@Redfish.OperationApplyTime"?:
//   "Immediate" (default) | "OnReset"}. ImageURI is required and https only. Targets holds
//   FirmwareInventory members (Updateable ones) and at most one of the proxy's systems
//   (/redfish/v1/Systems/<id>: whose Reset applies an OnReset update); no member named means
//   every Updateable member. Username and Password (DMTF's credentials for the image's
//   source) are taken when both are strings, recorded with the request like every
//   parameter (what a rack test checks arrived), and otherwise unused. A body that breaks
//   this is a 400 with a Redfish error body (`error.code`, `error.@Message.ExtendedInfo`),
//   and no task.
// * Accepted: 202, `Location: /redfish/v1/TaskService/TaskMonitors/<n>`, the Task as body.
//   The Task (/redfish/v1/TaskService/Tasks/<n>) is New for the first tenth of the task
//   duration (default 1500 ms), then Running with PercentComplete, then Completed (TaskStatus
//   OK) or Exception (TaskStatus Critical, the reason in Messages). The task monitor answers
//   202 (Retry-After: 1) with the Task while it runs and 200 with the Task when it is done.
//   The TaskService keeps 32 tasks: a 33rd pushes out the oldest finished one (its task and
//   monitor then answer 404).
// * The new version is the image file name's: the last path segment of ImageURI (query
//   ignored), its trailing extensions that start with a letter taken off (.bin, .img.gz), then
//   what follows the last "-" when it starts with a digit: bios-2.3.1.bin -> 2.3.1,
//   X11DPU-bmc-01.74.11.fwpkg -> 01.74.11. A name without one ends the task in Exception
//   ("carries no version"), as a BMC fails an image it cannot read.
// * Immediate: the targets' versions change when the task completes. OnReset: the task ends
//   Completed with Update.1.0.AwaitToActivate and Base.1.13.ResetRequired in Messages, and the
//   versions change when the next ComputerSystem.Reset of the named system (any of the
//   proxy's systems when none was named) goes through the proxy and sushy accepts it.
// * Push-only (control API): the UpdateService offers no SimpleUpdate but
//   MultipartHttpPushUri (/redfish/v1/UpdateService/upload): a multipart/form-data POST with
//   an `UpdateParameters` part (JSON: Targets?, @Redfish.OperationApplyTime?) and an
//   `UpdateFile` part whose file name carries the version, answered as SimpleUpdate is.
//   HttpPushUri (a bare image, no file name; deprecated by DMTF) is never offered.
//
// Control API (on the health proxy's control port, JSON bodies):
//   POST /health/update {offered?, pushOnly?, taskMs?, failNext?}  only the fields given change:
//        offered: false -> no UpdateService (404, and no link from the service root);
//        pushOnly: true -> MultipartHttpPushUri instead of SimpleUpdate;
//        taskMs: 0..60000 -> the duration of the next tasks;
//        failNext: "message" -> the next task ends in Exception with that message (null: not)
//   GET  /health/update/requests  {count, requests: [{method, path, status, body}]}: every
//        update request received (refused ones too), oldest first (the last 1000; count is
//        all of them); multipart bodies as {UpdateParameters, UpdateFile: {fileName, bytes}}
//   POST /health/update/reset      versions, tasks, requests and switches back to the start
// Plain ESM, no npm dependencies.

const ROOT = '/redfish/v1';
const UPDATE = `${ROOT}/UpdateService`;
const INVENTORY = `${UPDATE}/FirmwareInventory`;
const SIMPLE_UPDATE = `${UPDATE}/Actions/UpdateService.SimpleUpdate`;
const PUSH = `${UPDATE}/upload`;
const TASKS = `${ROOT}/TaskService/Tasks`;
const MONITORS = `${ROOT}/TaskService/TaskMonitors`;
const APPLY_TIMES = ['Immediate', 'OnReset'];
const DEFAULT_TASK_MS = 1500;
/** Tasks kept (the oldest finished one goes first, as CompletedTaskOverWritePolicy says). */
const MAX_TASKS = 32;
/** Update requests kept for the control API (the count covers them all). */
const MAX_REQUESTS = 1000;

const COMPONENTS = {
  BIOS: { name: 'Rack BIOS', version: '2.4.1', updateable: true },
  BMC: { name: 'Rack BMC', version: '1.12.0', updateable: false },
};

/**
 * The version an image's file name carries (the rule in the header), or undefined.
 * @param {string} fileName
 */
export function versionOfImage(fileName) {
  let base = fileName;
  for (;;) {
    const stripped = base.replace(/\.[A-Za-z][A-Za-z0-9]*$/, '');
    if (stripped === base) break;
    base = stripped;
  }
  const m = base.match(/-(\d[0-9A-Za-z.]*)$/);
  return m ? m[1] : undefined;
}

function fileNameOf(imageURI) {
  const u = new URL(imageURI);
  return decodeURIComponent(u.pathname.split('/').pop() ?? '');
}

/** A Redfish message (Message registry entry as BMCs list them). */
const message = (id, text, args = [], severity = 'OK') => ({
  MessageId: id,
  Message: text,
  MessageArgs: args,
  Severity: severity,
});

/** A Redfish error body for a 4xx answer. */
function errorBody(id, text, args) {
  return {
    error: {
      code: id,
      message: text,
      '@Message.ExtendedInfo': [
        {
          ...message(id, text, args, 'Warning'),
          Resolution: 'Correct the request body and resubmit the request.',
        },
      ],
    },
  };
}

/** Parses a multipart/form-data body into {name: {fileName?, content: Buffer}}. */
function parseMultipart(contentType, body) {
  const b = /boundary=(?:"([^"]+)"|([^;]+))/i.exec(contentType ?? '');
  if (!b) return undefined;
  const boundary = Buffer.from(`--${b[1] ?? b[2].trim()}`);
  const parts = {};
  let at = body.indexOf(boundary);
  while (at !== -1) {
    const start = at + boundary.length;
    if (body.subarray(start, start + 2).toString() === '--') break;
    const next = body.indexOf(boundary, start);
    if (next === -1) return undefined;
    const part = body.subarray(start + 2, next - 2); // CRLF after the boundary and before the next
    const split = part.indexOf('\r\n\r\n');
    if (split === -1) return undefined;
    const head = part.subarray(0, split).toString('utf8');
    const disposition = /content-disposition:[^\r\n]*/i.exec(head)?.[0] ?? '';
    const name = /\bname="([^"]*)"/.exec(disposition)?.[1];
    const fileName = /\bfilename="([^"]*)"/.exec(disposition)?.[1];
    if (name) parts[name] = { fileName, content: part.subarray(split + 4) };
    at = next;
  }
  return parts;
}

/**
 * @param {object} o
 * @param {string[]} o.systems  the proxy's system ids
 */
export function createUpdateService({ systems }) {
  let s;
  const timers = new Set();
  const reset = () => {
    for (const t of timers) clearTimeout(t);
    timers.clear();
    s = {
      offered: true,
      pushOnly: false,
      taskMs: DEFAULT_TASK_MS,
      failNext: undefined,
      versions: Object.fromEntries(
        Object.entries(COMPONENTS).map(([id, c]) => [id, c.version]),
      ),
      tasks: new Map(),
      nextTask: 1,
      requests: [],
      requestCount: 0,
      /** OnReset updates waiting for a Reset: {system?, targets, version, task} */
      pending: [],
    };
  };
  reset();

  const member = id => ({ '@odata.id': id });
  const systemPath = id => `${ROOT}/Systems/${id}`;

  function inventoryItem(id) {
    const c = COMPONENTS[id];
    return {
      '@odata.type': '#SoftwareInventory.v1_10_0.SoftwareInventory',
      '@odata.id': `${INVENTORY}/${id}`,
      Id: id,
      Name: c.name,
      Version: s.versions[id],
      Updateable: c.updateable,
      Status: { State: 'Enabled', Health: 'OK' },
    };
  }

  function updateService() {
    return {
      '@odata.type': '#UpdateService.v1_11_0.UpdateService',
      '@odata.id': UPDATE,
      Id: 'UpdateService',
      Name: 'Update Service',
      ServiceEnabled: true,
      FirmwareInventory: member(INVENTORY),
      ...(s.pushOnly
        ? {
            MultipartHttpPushUri: PUSH,
          }
        : {
            Actions: {
              '#UpdateService.SimpleUpdate': {
                target: SIMPLE_UPDATE,
                'TransferProtocol@Redfish.AllowableValues': ['HTTPS'],
                '@Redfish.OperationApplyTimeSupport': {
                  SupportedValues: APPLY_TIMES,
                },
              },
            },
          }),
    };
  }

  /** The Task as it stands now (state from the elapsed time until the end is settled). */
  function taskBody(t) {
    const elapsed = Date.now() - t.startedAt;
    let state = t.end?.state;
    let percent = 100;
    if (!state) {
      state = elapsed < t.durationMs / 10 ? 'New' : 'Running';
      percent =
        state === 'New'
          ? 0
          : Math.min(99, Math.floor((elapsed / t.durationMs) * 100));
    }
    return {
      '@odata.type': '#Task.v1_7_0.Task',
      '@odata.id': `${TASKS}/${t.id}`,
      Id: String(t.id),
      Name: `Firmware update ${t.id}`,
      TaskState: state,
      TaskStatus: t.end?.status ?? 'OK',
      PercentComplete: percent,
      StartTime: new Date(t.startedAt).toISOString(),
      ...(t.end ? { EndTime: t.end.at } : {}),
      TaskMonitor: `${MONITORS}/${t.id}`,
      Messages: t.end?.messages ?? [],
      Payload: {
        HttpOperation: 'POST',
        TargetUri: t.targetUri,
        JsonBody: JSON.stringify(t.parameters),
      },
    };
  }

  const endTask = (t, state, status, messages) => {
    t.end = { state, status, messages, at: new Date().toISOString() };
  };

  /** Starts a task for a validated update; answers 202 with the task monitor. */
  function startTask({
    targetUri,
    parameters,
    fileName,
    targets,
    system,
    applyTime,
  }) {
    const t = {
      id: s.nextTask++,
      startedAt: Date.now(),
      durationMs: s.taskMs,
      targetUri,
      parameters,
    };
    s.tasks.set(t.id, t);
    if (s.tasks.size > MAX_TASKS) {
      const oldest = [...s.tasks.values()].find(old => old.end);
      if (oldest) s.tasks.delete(oldest.id);
    }
    const failure = s.failNext;
    s.failNext = undefined;
    const version = versionOfImage(fileName);
    const names = targets.map(id => `${INVENTORY}/${id}`).join(', ');
    const timer = setTimeout(() => {
      timers.delete(timer);
      if (failure !== undefined) {
        endTask(t, 'Exception', 'Critical', [
          message(
            'Update.1.0.ApplyFailed',
            failure,
            [fileName, names],
            'Critical',
          ),
        ]);
        return;
      }
      if (!version) {
        endTask(t, 'Exception', 'Critical', [
          message(
            'Update.1.0.InvalidImage',
            `The image ${fileName} carries no version.`,
            [fileName],
            'Critical',
          ),
        ]);
        return;
      }
      if (applyTime === 'OnReset') {
        s.pending.push({ system, targets, version });
        const resetUri = `${systemPath(
          system ?? systems[0],
        )}/Actions/ComputerSystem.Reset`;
        endTask(t, 'Completed', 'OK', [
          message(
            'Update.1.0.AwaitToActivate',
            `Awaiting for an action to proceed with activating image ${fileName} on ${names}.`,
            [fileName, names],
          ),
          message(
            'Base.1.13.ResetRequired',
            `In order to complete the operation, a component reset is required with the Reset action URI ${resetUri} and ResetType ForceRestart.`,
            [resetUri, 'ForceRestart'],
            'Warning',
          ),
        ]);
        return;
      }
      for (const id of targets) s.versions[id] = version;
      endTask(t, 'Completed', 'OK', [
        message(
          'Update.1.0.UpdateSuccessful',
          `The target ${names} has been updated successfully with image ${fileName}.`,
          [names, fileName],
        ),
      ]);
    }, t.durationMs);
    timer.unref?.();
    timers.add(timer);
    return {
      status: 202,
      headers: { location: `${MONITORS}/${t.id}`, 'retry-after': '1' },
      body: taskBody(t),
    };
  }

  /**
   * Checks Targets and the apply time; answers {targets, system, applyTime} or a 400.
   * @param {string} action  the action's name in messages
   */
  function checkParameters(action, parameters) {
    const bad = (id, text, args) => ({
      refused: { status: 400, body: errorBody(id, text, args) },
    });
    const applyTime = parameters['@Redfish.OperationApplyTime'] ?? 'Immediate';
    if (!APPLY_TIMES.includes(applyTime))
      return bad(
        'Base.1.8.ActionParameterNotSupported',
        `The parameter @Redfish.OperationApplyTime (${applyTime}) is not supported by ${action}: Immediate or OnReset.`,
        [String(applyTime), action],
      );
    const given = parameters.Targets ?? [];
    if (!Array.isArray(given) || given.some(t => typeof t !== 'string'))
      return bad(
        'Base.1.8.ActionParameterValueTypeError',
        `The value for the parameter Targets in the action ${action} is not an array of URIs.`,
        [JSON.stringify(given), 'Targets', action],
      );
    const targets = [];
    let system;
    for (const uri of given) {
      const path = uri.replace(/\/+$/, '');
      const item = path.startsWith(`${INVENTORY}/`)
        ? path.slice(INVENTORY.length + 1)
        : undefined;
      const sys = path.startsWith(`${ROOT}/Systems/`)
        ? path.slice(`${ROOT}/Systems/`.length)
        : undefined;
      if (item && COMPONENTS[item]?.updateable) {
        if (!targets.includes(item)) targets.push(item);
      } else if (item && COMPONENTS[item]) {
        return bad(
          'Base.1.8.ActionParameterValueFormatError',
          `The target ${uri} is not Updateable.`,
          [uri, 'Targets', action],
        );
      } else if (sys && systems.includes(sys) && (!system || system === sys)) {
        system = sys;
      } else {
        return bad(
          'Base.1.8.ActionParameterValueFormatError',
          `The target ${uri} is not a member of ${INVENTORY} (nor one system of this BMC).`,
          [uri, 'Targets', action],
        );
      }
    }
    if (!targets.length)
      targets.push(
        ...Object.keys(COMPONENTS).filter(id => COMPONENTS[id].updateable),
      );
    return { targets, system, applyTime };
  }

  function simpleUpdate(parameters) {
    const action = 'UpdateService.SimpleUpdate';
    const bad = (id, text, args) => ({
      status: 400,
      body: errorBody(id, text, args),
    });
    if (typeof parameters.ImageURI !== 'string' || !parameters.ImageURI)
      return bad(
        'Base.1.8.ActionParameterMissing',
        `The action ${action} requires the parameter ImageURI to be present in the request body.`,
        [action, 'ImageURI'],
      );
    if (
      parameters.TransferProtocol !== undefined &&
      parameters.TransferProtocol !== 'HTTPS'
    )
      return bad(
        'Base.1.8.ActionParameterNotSupported',
        `The parameter TransferProtocol (${parameters.TransferProtocol}) is not supported by ${action}: HTTPS only.`,
        [String(parameters.TransferProtocol), action],
      );
    let url;
    try {
      url = new URL(parameters.ImageURI);
    } catch {
      url = undefined;
    }
    if (url?.protocol !== 'https:')
      return bad(
        'Base.1.8.ActionParameterValueFormatError',
        `The value ${parameters.ImageURI} for the parameter ImageURI in the action ${action} is not an https URI.`,
        [parameters.ImageURI, 'ImageURI', action],
      );
    for (const key of ['Username', 'Password'])
      if (
        parameters[key] !== undefined &&
        (typeof parameters[key] !== 'string' ||
          typeof parameters[key === 'Username' ? 'Password' : 'Username'] !==
            'string')
      )
        return bad(
          'Base.1.8.ActionParameterValueFormatError',
          `The parameters Username and Password of ${action} are strings, given together.`,
          [key, action],
        );
    const checked = checkParameters(action, parameters);
    if (checked.refused) return checked.refused;
    return startTask({
      targetUri: SIMPLE_UPDATE,
      parameters,
      fileName: fileNameOf(parameters.ImageURI),
      ...checked,
    });
  }

  function multipartPush(contentType, raw) {
    const action = 'MultipartHttpPushUri';
    const bad = (id, text, args) => ({
      status: 400,
      body: errorBody(id, text, args),
    });
    const parts = parseMultipart(contentType, raw);
    if (!parts?.UpdateFile)
      return bad(
        'Base.1.8.ActionParameterMissing',
        `A push to ${PUSH} requires a multipart/form-data body with an UpdateFile part.`,
        [action, 'UpdateFile'],
      );
    let parameters = {};
    if (parts.UpdateParameters) {
      try {
        parameters = JSON.parse(
          parts.UpdateParameters.content.toString('utf8'),
        );
      } catch {
        parameters = undefined;
      }
      if (!parameters || typeof parameters !== 'object')
        return bad(
          'Base.1.8.MalformedJSON',
          'The UpdateParameters part is not a JSON object.',
          [],
        );
    }
    const checked = checkParameters(action, parameters);
    if (checked.refused) return checked.refused;
    return startTask({
      targetUri: PUSH,
      parameters,
      fileName: parts.UpdateFile.fileName ?? '',
      ...checked,
    });
  }

  return {
    serviceRootLinks() {
      return s.offered
        ? {
            UpdateService: member(UPDATE),
            TaskService: member(`${ROOT}/TaskService`),
          }
        : { TaskService: member(`${ROOT}/TaskService`) };
    },

    /** GET of an update, task or inventory path; undefined when not one. */
    get(p) {
      if (p === UPDATE)
        return s.offered ? { status: 200, body: updateService() } : undefined;
      if (p === `${ROOT}/TaskService`)
        return {
          status: 200,
          body: {
            '@odata.type': '#TaskService.v1_2_0.TaskService',
            '@odata.id': p,
            Id: 'TaskService',
            Name: 'Task Service',
            ServiceEnabled: true,
            CompletedTaskOverWritePolicy: 'Oldest',
            Tasks: member(TASKS),
          },
        };
      if (p === TASKS)
        return {
          status: 200,
          body: {
            '@odata.id': p,
            Name: 'Task Collection',
            'Members@odata.count': s.tasks.size,
            Members: [...s.tasks.keys()].map(n => member(`${TASKS}/${n}`)),
          },
        };
      const task = p.match(
        /^\/redfish\/v1\/TaskService\/(Tasks|TaskMonitors)\/(\d+)$/,
      );
      if (task) {
        const t = s.tasks.get(Number(task[2]));
        if (!t) return undefined;
        const body = taskBody(t);
        if (task[1] === 'Tasks') return { status: 200, body };
        // The task monitor: 202 while the operation runs, the result when it is done.
        return t.end
          ? { status: 200, body }
          : {
              status: 202,
              headers: { location: `${MONITORS}/${t.id}`, 'retry-after': '1' },
              body,
            };
      }
      return undefined;
    },

    /** The inventory's resources (served even without an UpdateService, as before). */
    inventory(p) {
      if (p === INVENTORY)
        return {
          '@odata.id': p,
          Name: 'Firmware Collection',
          Members: Object.keys(COMPONENTS).map(n => member(`${p}/${n}`)),
        };
      const item = p.startsWith(`${INVENTORY}/`)
        ? p.slice(INVENTORY.length + 1)
        : undefined;
      return item && COMPONENTS[item] ? inventoryItem(item) : undefined;
    },

    /** POST of an update; undefined when the path is not one. */
    post(p, contentType, raw) {
      if (p !== SIMPLE_UPDATE && p !== PUSH) return undefined;
      let answer;
      let recorded;
      if (!s.offered || (p === SIMPLE_UPDATE ? s.pushOnly : !s.pushOnly)) {
        answer = {
          status: 404,
          body: errorBody(
            'Base.1.8.ResourceMissingAtURI',
            `The resource at the URI ${p} was not found.`,
            [p],
          ),
        };
      } else if (p === SIMPLE_UPDATE) {
        let parameters;
        try {
          parameters = JSON.parse(raw.toString('utf8'));
        } catch {
          parameters = undefined;
        }
        recorded = parameters ?? raw.toString('utf8').slice(0, 4096);
        answer =
          parameters &&
          typeof parameters === 'object' &&
          !Array.isArray(parameters)
            ? simpleUpdate(parameters)
            : {
                status: 400,
                body: errorBody(
                  'Base.1.8.MalformedJSON',
                  'The request body submitted was malformed JSON and could not be parsed by the receiving service.',
                  [],
                ),
              };
      } else {
        answer = multipartPush(contentType, raw);
        const parts = parseMultipart(contentType, raw) ?? {};
        let params = parts.UpdateParameters?.content.toString('utf8');
        try {
          params = params === undefined ? undefined : JSON.parse(params);
        } catch {
          /* kept as text */
        }
        recorded = {
          UpdateParameters: params,
          UpdateFile: parts.UpdateFile
            ? {
                fileName: parts.UpdateFile.fileName,
                bytes: parts.UpdateFile.content.length,
              }
            : undefined,
        };
      }
      if (recorded === undefined && raw.length)
        recorded = raw.toString('utf8').slice(0, 4096);
      s.requestCount++;
      s.requests.push({
        method: 'POST',
        path: p,
        status: answer.status,
        body: recorded,
      });
      if (s.requests.length > MAX_REQUESTS) s.requests.shift();
      return answer;
    },

    /** A ComputerSystem.Reset of `system` went through: OnReset updates waiting for it apply. */
    afterReset(system) {
      const waiting = s.pending.filter(u => !u.system || u.system === system);
      s.pending = s.pending.filter(u => !waiting.includes(u));
      for (const u of waiting)
        for (const id of u.targets) s.versions[id] = u.version;
    },

    /** The control API's update routes; undefined when the path is not one. */
    control(method, p, body) {
      if (method === 'GET' && p === '/health/update/requests')
        return {
          status: 200,
          body: { count: s.requestCount, requests: s.requests },
        };
      if (method === 'POST' && p === '/health/update/reset') {
        reset();
        return { status: 200, body: {} };
      }
      if (method !== 'POST' || p !== '/health/update') return undefined;
      const wrong = [];
      if ('offered' in body && typeof body.offered !== 'boolean')
        wrong.push('offered (boolean)');
      if ('pushOnly' in body && typeof body.pushOnly !== 'boolean')
        wrong.push('pushOnly (boolean)');
      if (
        'taskMs' in body &&
        !(
          Number.isInteger(body.taskMs) &&
          body.taskMs >= 0 &&
          body.taskMs <= 60000
        )
      )
        wrong.push('taskMs (0 to 60000)');
      if (
        'failNext' in body &&
        body.failNext !== null &&
        (typeof body.failNext !== 'string' || !body.failNext)
      )
        wrong.push('failNext (a message, or null)');
      if (wrong.length)
        return { status: 400, body: { error: `${wrong.join(', ')} please` } };
      if ('offered' in body) s.offered = body.offered;
      if ('pushOnly' in body) s.pushOnly = body.pushOnly;
      if ('taskMs' in body) s.taskMs = body.taskMs;
      if ('failNext' in body) s.failNext = body.failNext ?? undefined;
      return {
        status: 200,
        body: {
          offered: s.offered,
          pushOnly: s.pushOnly,
          taskMs: s.taskMs,
          failNext: s.failNext ?? null,
          versions: s.versions,
        },
      };
    },

    stop() {
      for (const t of timers) clearTimeout(t);
      timers.clear();
    },
  };
}
