// The OpenStack calls a validation makes: Keystone (the dedicated project and the role on it),
// Placement (custom traits on a host's resource provider), Nova (aggregate, private flavor,
// service status, the canary server), Glance (the image by name). Every create is idempotent
// by name and every delete accepts "already gone", because a resumed task repeats its steps.
import { CloudError } from '../cloud/errors.js';
import type { ServiceClient } from '../cloud/http/service-client.js';
import { asRec, optStr, type Rec, reqNum, reqStr, strList } from '../cloud/openstack/fields.js';
import {
  type NovaAggregate,
  type NovaServer,
  type NovaService,
  parseAggregate,
  parseServer,
} from '../cloud/openstack/nova.js';
import { type CloudSession, openSession } from '../cloud/session.js';

/** The trait nova-compute puts on the provider of a disabled service; the scheduler forbids it. */
export const COMPUTE_STATUS_DISABLED = 'COMPUTE_STATUS_DISABLED';

const isStatus = (e: unknown, ...codes: number[]) =>
  e instanceof CloudError && e.status !== undefined && codes.includes(e.status);

export interface CreatedFlavor {
  id: string;
  name: string;
}

export class ValidationCloud {
  constructor(readonly admin: CloudSession) {}

  // --- Keystone -------------------------------------------------------------------------------

  private async identity(): Promise<{ client: ServiceClient; prefix: string }> {
    const client = this.admin.service('identity');
    const base = (await client.endpoint()).replace(/\/+$/, '');
    return { client, prefix: /\/v3$/.test(base) ? '' : '/v3' };
  }

  async findProject(name: string): Promise<{ id: string; domainId: string } | null> {
    const { client, prefix } = await this.identity();
    const body = asRec(await client.get(`${prefix}/projects`, { name }), 'GET /v3/projects');
    const list = Array.isArray(body.projects) ? body.projects.map((p) => asRec(p, 'projects[]')) : [];
    const p = list.find((x) => x.name === name);
    return p ? { id: reqStr(p, 'id', 'project'), domainId: reqStr(p, 'domain_id', 'project') } : null;
  }

  /** The domain of the project the admin session is scoped to: the dedicated project goes there. */
  async adminDomainId(): Promise<string> {
    const tok = await this.admin.token();
    if (!tok.projectId) {
      throw new CloudError('config', 'the credential is not scoped to a project', {
        fix: 'Validation needs a project-scoped credential (OS_PROJECT_NAME)',
      });
    }
    const { client, prefix } = await this.identity();
    const body = asRec(await client.get(`${prefix}/projects/${tok.projectId}`), 'GET /v3/projects/{id}');
    return reqStr(asRec(body.project, 'project'), 'domain_id', 'project');
  }

  async ensureProject(name: string, description: string): Promise<string> {
    const found = await this.findProject(name);
    if (found) return found.id;
    const { client, prefix } = await this.identity();
    try {
      const res = await client.request({
        method: 'POST',
        path: `${prefix}/projects`,
        body: { project: { name, description, domain_id: await this.adminDomainId(), enabled: true } },
      });
      return reqStr(asRec(asRec(res.body, 'POST /v3/projects').project, 'project'), 'id', 'project');
    } catch (e) {
      // Another host task of the batch created it first.
      const again = isStatus(e, 409) ? await this.findProject(name) : null;
      if (again) return again.id;
      throw e;
    }
  }

  /** Gives the admin session's user `role` on the project (PUT is idempotent in Keystone). */
  async grantRole(projectId: string, role: string): Promise<void> {
    const { client, prefix } = await this.identity();
    const body = asRec(await client.get(`${prefix}/roles`, { name: role }), 'GET /v3/roles');
    const r = (Array.isArray(body.roles) ? body.roles : []).map((x) => asRec(x, 'roles[]'))[0];
    if (!r) {
      throw new CloudError('config', `Keystone has no role named ${role}`, {
        fix: 'Set tasks.validation.role to a role that exists (openstack role list)',
      });
    }
    const userId = (await this.admin.token()).userId;
    if (!userId) throw new CloudError('protocol', 'the token names no user');
    await client.request({
      method: 'PUT',
      path: `${prefix}/projects/${projectId}/users/${userId}/roles/${reqStr(r, 'id', 'role')}`,
    });
  }

  async deleteProject(projectId: string): Promise<void> {
    const { client, prefix } = await this.identity();
    await client.request({ method: 'DELETE', path: `${prefix}/projects/${projectId}`, accept: [404] });
  }

  /**
   * A session of the same user scoped to the dedicated project, so the canary belongs to it. It
   * authenticates again with the same secret; an application credential carries a fixed
   * project and cannot do that.
   */
  async projectSession(projectId: string): Promise<CloudSession> {
    const cfg = this.admin.config;
    if (cfg.method === 'application-credential') {
      throw new CloudError(
        'config',
        'validation boots its canary in a project of its own, and an application credential cannot be scoped to another project',
        {
          fix: 'Give the tasks credential (credentials.tasks) a password credential (clouds.yaml with username/password) to run validate-compute',
        },
      );
    }
    const auth = { ...cfg.auth, projectId };
    delete auth.projectName;
    delete auth.projectDomainName;
    delete auth.projectDomainId;
    // The canary's session makes only the tasks credential's calls (API_CALLS), audited like
    // the administrative session it comes from.
    const parent = this.admin.credential;
    return openSession({
      config: { ...cfg, auth },
      eager: true,
      credential: {
        kind: 'tasks',
        label: `${parent?.label ?? 'tasks'} in project ${projectId}`,
        ...(parent?.observe ? { observe: parent.observe } : {}),
      },
    });
  }

  // --- Placement ------------------------------------------------------------------------------

  private async placementHeaders(): Promise<Record<string, string>> {
    return this.admin.placement.headers();
  }

  async ensureTrait(name: string): Promise<void> {
    await this.admin.placement.client.request({
      method: 'PUT',
      path: `/traits/${encodeURIComponent(name)}`,
      headers: await this.placementHeaders(),
    });
  }

  async deleteTrait(name: string): Promise<void> {
    await this.admin.placement.client.request({
      method: 'DELETE',
      path: `/traits/${encodeURIComponent(name)}`,
      headers: await this.placementHeaders(),
      accept: [404],
    });
  }

  /** Providers that have a trait (so a clean-up also finds hosts a crashed run left it on). */
  async providersWithTrait(name: string): Promise<string[]> {
    const res = await this.admin.placement.client.request({
      method: 'GET',
      path: '/resource_providers',
      query: { required: name },
      headers: await this.placementHeaders(),
      accept: [400],
    });
    // 400: the trait does not exist (any more), so no provider has it.
    if (res.status === 400) return [];
    const body = asRec(res.body, 'GET /resource_providers');
    return (Array.isArray(body.resource_providers) ? body.resource_providers : []).map((p) =>
      reqStr(asRec(p, 'resource_providers[]'), 'uuid', 'resource provider'),
    );
  }

  /**
   * Adds and removes traits of a provider with its generation; on a 409 (nova-compute wrote in
   * between) reads again and re-applies. Returns whether anything changed.
   */
  async changeProviderTraits(rpUuid: string, add: string[], remove: string[]): Promise<boolean> {
    const path = `/resource_providers/${encodeURIComponent(rpUuid)}/traits`;
    for (let attempt = 0; ; attempt++) {
      const res = await this.admin.placement.client.request({
        method: 'GET',
        path,
        headers: await this.placementHeaders(),
      });
      const body = asRec(res.body, `GET ${path}`);
      const current = strList(body.traits);
      const next = new Set(current);
      for (const t of add) next.add(t);
      for (const t of remove) next.delete(t);
      if (next.size === current.length && current.every((t) => next.has(t))) return false;
      try {
        await this.admin.placement.client.request({
          method: 'PUT',
          path,
          headers: await this.placementHeaders(),
          body: {
            resource_provider_generation: reqNum(body, 'resource_provider_generation', path),
            traits: [...next].sort(),
          },
        });
        return true;
      } catch (e) {
        if (isStatus(e, 409) && attempt < 5) continue;
        throw e;
      }
    }
  }

  /** The compute node resource provider of a host (the hypervisor id at 2.53+). */
  async providerOfHost(host: string): Promise<string> {
    const hv = (await this.admin.nova.listHypervisors()).find(
      (h) => (h.serviceHost ?? h.hypervisorHostname) === host,
    );
    if (!hv) {
      throw new CloudError('http', `Nova lists no hypervisor of host ${host}`, {
        fix: 'Check `openstack hypervisor list`',
      });
    }
    return hv.id;
  }

  // --- Nova -----------------------------------------------------------------------------------

  private async nova(
    method: string,
    path: string,
    body?: unknown,
    accept?: number[],
    session: CloudSession = this.admin,
  ): Promise<{ status: number; body: unknown }> {
    const res = await session.nova.client.request({
      method,
      path,
      headers: await session.nova.headers(),
      ...(body === undefined ? {} : { body }),
      ...(accept ? { accept } : {}),
    });
    return { status: res.status, body: res.body };
  }

  async service(host: string): Promise<NovaService | null> {
    return (await this.admin.nova.listServices('nova-compute', host)).find((s) => s.host === host) ?? null;
  }

  async setServiceStatus(serviceId: string, status: 'enabled' | 'disabled', reason?: string): Promise<void> {
    await this.admin.nova.setServiceStatus(serviceId, status, reason);
  }

  async findAggregate(name: string): Promise<NovaAggregate | null> {
    return (await this.admin.nova.listAggregates()).find((a) => a.name === name) ?? null;
  }

  async ensureAggregate(name: string, metadata: Record<string, string>): Promise<NovaAggregate> {
    let agg = await this.findAggregate(name);
    if (!agg) {
      try {
        const { body } = await this.nova('POST', '/os-aggregates', { aggregate: { name } });
        agg = parseAggregate(asRec(body, 'POST /os-aggregates').aggregate);
      } catch (e) {
        agg = isStatus(e, 409) ? await this.findAggregate(name) : null;
        if (!agg) throw e;
      }
    }
    const current = agg;
    if (Object.entries(metadata).every(([k, v]) => current.metadata[k] === v)) return current;
    const { body } = await this.nova('POST', `/os-aggregates/${current.id}/action`, {
      set_metadata: { metadata },
    });
    return parseAggregate(asRec(body, 'set_metadata').aggregate);
  }

  async addAggregateHost(aggregateId: number, host: string): Promise<void> {
    // 409: the host is already a member.
    await this.nova('POST', `/os-aggregates/${aggregateId}/action`, { add_host: { host } }, [409]);
  }

  async removeAggregateHost(aggregateId: number, host: string): Promise<void> {
    // 404: the host is no member (any more).
    await this.nova('POST', `/os-aggregates/${aggregateId}/action`, { remove_host: { host } }, [404]);
  }

  async deleteAggregate(agg: NovaAggregate): Promise<void> {
    for (const host of agg.hosts) await this.removeAggregateHost(agg.id, host);
    await this.nova('DELETE', `/os-aggregates/${agg.id}`, undefined, [404]);
  }

  async findFlavor(
    name: string,
  ): Promise<{ id: string; vcpus: number; ramMB: number; diskGB: number } | null> {
    const { body } = await this.nova('GET', '/flavors/detail?is_public=None');
    const list = asRec(body, 'GET /flavors/detail').flavors;
    const f = (Array.isArray(list) ? list : [])
      .map((x) => asRec(x, 'flavors[]'))
      .find((x) => x.name === name);
    if (!f) return null;
    return {
      id: reqStr(f, 'id', 'flavor'),
      vcpus: reqNum(f, 'vcpus', 'flavor'),
      ramMB: reqNum(f, 'ram', 'flavor'),
      diskGB: reqNum(f, 'disk', 'flavor'),
    };
  }

  /** The size of a flavor named by name or id. */
  async flavorSize(nameOrId: string): Promise<{ vcpus: number; ramMB: number; diskGB: number } | null> {
    const byName = await this.findFlavor(nameOrId);
    if (byName) return { vcpus: byName.vcpus, ramMB: byName.ramMB, diskGB: byName.diskGB };
    const { status, body } = await this.nova(
      'GET',
      `/flavors/${encodeURIComponent(nameOrId)}`,
      undefined,
      [404],
    );
    if (status === 404) return null;
    const f = asRec(asRec(body, 'GET /flavors/{id}').flavor, 'flavor');
    return {
      vcpus: reqNum(f, 'vcpus', 'flavor'),
      ramMB: reqNum(f, 'ram', 'flavor'),
      diskGB: reqNum(f, 'disk', 'flavor'),
    };
  }

  /** A private flavor of the given size, open to one project, requiring the trait. */
  async ensureFlavor(
    name: string,
    size: { vcpus: number; ramMB: number; diskGB: number },
    projectId: string,
    trait: string,
  ): Promise<CreatedFlavor> {
    let found = await this.findFlavor(name);
    if (!found) {
      try {
        const { body } = await this.nova('POST', '/flavors', {
          flavor: {
            name,
            vcpus: size.vcpus,
            ram: size.ramMB,
            disk: size.diskGB,
            'os-flavor-access:is_public': false,
          },
        });
        const f = asRec(asRec(body, 'POST /flavors').flavor, 'flavor');
        found = { ...size, id: reqStr(f, 'id', 'flavor') };
      } catch (e) {
        found = isStatus(e, 409) ? await this.findFlavor(name) : null;
        if (!found) throw e;
      }
    }
    // Only ever the batch's own flavor: read it back by id and check its name before writing.
    const { body: check } = await this.nova('GET', `/flavors/${encodeURIComponent(found.id)}`);
    const checked = asRec(asRec(check, 'GET /flavors/{id}').flavor, 'flavor');
    if (checked.name !== name || checked['os-flavor-access:is_public'] !== false) {
      throw new CloudError(
        'protocol',
        `flavor ${found.id} is not the private flavor ${name}: refusing to change it`,
      );
    }
    await this.nova('POST', `/flavors/${found.id}/os-extra_specs`, {
      extra_specs: { [`trait:${trait}`]: 'required' },
    });
    // 409: the project has access already.
    await this.nova('POST', `/flavors/${found.id}/action`, { addTenantAccess: { tenant: projectId } }, [409]);
    return { id: found.id, name };
  }

  async deleteFlavor(id: string): Promise<void> {
    await this.nova('DELETE', `/flavors/${encodeURIComponent(id)}`, undefined, [404]);
  }

  /** An image id from a name or id (Nova boots from ids only). */
  async imageId(nameOrId: string): Promise<string | null> {
    const glance = this.admin.service('image');
    const byId = await glance.request({
      method: 'GET',
      path: `/v2/images/${encodeURIComponent(nameOrId)}`,
      accept: [400, 404],
    });
    if (byId.status === 200) return reqStr(asRec(byId.body, 'image'), 'id', 'image');
    const body = asRec(await glance.get('/v2/images', { name: nameOrId }), 'GET /v2/images');
    const first = (Array.isArray(body.images) ? body.images : [])[0];
    return first ? reqStr(asRec(first, 'images[]'), 'id', 'image') : null;
  }

  /** Servers of one project (admin view, deleted ones excluded). */
  async projectServers(projectId: string): Promise<NovaServer[]> {
    const { body } = await this.nova(
      'GET',
      `/servers/detail?all_tenants=1&project_id=${encodeURIComponent(projectId)}`,
    );
    const list = asRec(body, 'GET /servers/detail').servers;
    return (Array.isArray(list) ? list : []).map(parseServer).filter((s) => s.projectId === projectId);
  }

  async getServer(id: string): Promise<NovaServer | null> {
    const { status, body } = await this.nova('GET', `/servers/${id}`, undefined, [404]);
    return status === 404 ? null : parseServer(asRec(body, 'GET /servers/{id}').server);
  }

  /** The server's addresses, first network first (the views Nova builds from Neutron's ports). */
  async serverAddresses(id: string): Promise<string[]> {
    const { status, body } = await this.nova('GET', `/servers/${id}`, undefined, [404]);
    if (status === 404) return [];
    const addresses = asRec(asRec(body, 'server').server, 'server').addresses;
    const out: string[] = [];
    if (addresses && typeof addresses === 'object') {
      for (const entries of Object.values(addresses as Rec)) {
        for (const e of Array.isArray(entries) ? entries : []) {
          const a = optStr(asRec(e, 'address'), 'addr');
          if (a) out.push(a);
        }
      }
    }
    return out;
  }

  async deleteServer(id: string): Promise<void> {
    await this.nova('DELETE', `/servers/${id}`, undefined, [404]);
  }

  /**
   * Boots the canary in the project (through its session) onto the named host. The forced
   * host (`zone:host`) makes the scheduler skip its filters, ComputeFilter's "disabled" too;
   * Placement still has to offer that host's provider.
   */
  async bootCanary(
    project: CloudSession,
    spec: {
      name: string;
      imageId: string;
      flavorId: string;
      network: string;
      keyPair: string | null;
      zone: string;
      host: string;
    },
  ): Promise<string> {
    const server: Rec = {
      name: spec.name,
      imageRef: spec.imageId,
      flavorRef: spec.flavorId,
      networks: spec.network === 'none' || spec.network === 'auto' ? spec.network : [{ uuid: spec.network }],
      availability_zone: `${spec.zone}:${spec.host}`,
      metadata: { 'aicerine:validation': spec.host },
    };
    if (spec.keyPair) server.key_name = spec.keyPair;
    const { body } = await this.nova('POST', '/servers', { server }, undefined, project);
    return reqStr(asRec(asRec(body, 'POST /servers').server, 'server'), 'id', 'server');
  }
}
