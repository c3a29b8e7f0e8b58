import type { RackRedfish } from './talosEmulator';

/** A part of a rack BMC the control API can fail (e2e/rack/lib/redfishHealth.mjs). */
export type RackBmcPart =
  | { kind: 'PowerSupply'; name: 'PSU1' | 'PSU2' }
  | { kind: 'Fan'; name: 'Fan1' | 'Fan2' }
  | { kind: 'Drive'; name: 'Disk0' | 'Disk1' };

/**
 * The control API of the rack's BMC health proxy: fail or mend a part, write SEL entries,
 * page the SEL, make its answer huge or slow, take the FirmwareInventory away (or link it
 * off the BMC's origin), and count the requests the BMCs served. Systems are named by their id (the machine's SMBIOS UUID). A
 * call that does not answer 2xx throws with the proxy's words.
 */
export function bmcHealthControl(redfish: RackRedfish) {
  const base = redfish.healthControlUrl;
  if (!base) throw new Error('the rack has no BMC health proxy');
  const call = async <T>(p: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${base}${p}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${p}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  return {
    setPart: (
      systemId: string,
      part: RackBmcPart,
      health: 'OK' | 'Warning' | 'Critical',
    ) => call(`/health/${systemId}/part`, { ...part, health }),
    /** Appends `count` (1) SEL entries created now; answers the last ids. */
    writeLog: (
      systemId: string,
      entry: {
        message: string;
        severity?: 'OK' | 'Warning' | 'Critical';
        count?: number;
      },
    ) =>
      call<{ created: string[]; total: number }>(
        `/health/${systemId}/log`,
        entry,
      ),
    /** Every part OK, the SEL empty, not paged, not huge, not slow. */
    reset: (systemId: string) => call(`/health/${systemId}/reset`, {}),
    /** `{offered: false}`: FirmwareInventory answers 404; `{link}`: linked there; `{}`: normal. */
    firmware: (options: { offered?: boolean; link?: string }) =>
      call('/health/firmware', options),
    /**
     * The SEL's Entries in pages of `pageSize` (oldest first, `Members@odata.nextLink` with
     * `$skip`/`$top`, `Members@odata.count`); 0: one answer.
     */
    pageLog: (systemId: string, pageSize: number) =>
      call(`/health/${systemId}/logPages`, { pageSize }),
    /**
     * The SEL's Entries answer is a JSON body of about `bytes` bytes, streamed without a
     * Content-Length (never held in the proxy's memory); 0: off.
     */
    hugeLog: (systemId: string, bytes: number) =>
      call(`/health/${systemId}/logHuge`, { bytes }),
    /**
     * Every answer the proxy makes for the system (its chassis, parts, SEL) is sent at
     * `bytesPerSecond` after its headers; 0: off.
     */
    slowLog: (systemId: string, bytesPerSecond: number) =>
      call(`/health/${systemId}/slow`, { bytesPerSecond }),
    /** The requests the BMCs served since the last call. */
    requests: () =>
      call<{ count: number; paths: string[] }>('/health/requests'),
  };
}

export type BmcHealthControl = ReturnType<typeof bmcHealthControl>;
