"""Stock python-consul 0.7.1 (Debian python3-consul), unpatched, against registry in consul_compat mode.

Run by python-consul-compat.test.ts: python3 python_consul_compat.py HOST PORT FOLLOWER_PORT TOKEN
No response hook, no header renaming: the client reads X-Consul-Index as it does against Consul.
Each step prints `ok <step>`; the first failure raises (traceback, non-zero exit).
"""
import sys
import threading
import time

import consul
import requests

host, port, other_port, token = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]


def ok(step):
    print('ok ' + step, flush=True)


def expect(cond, what):
    if not cond:
        raise AssertionError(what)


print('python-consul ' + consul.__version__, flush=True)

# The stock client with its token option (python-consul 0.7.1 sends it as ?token=).
c = consul.Consul(host=host, port=port, token=token)

# ACL: the same client without a token is refused; the token as the X-Consul-Token header (the
# way a token is kept out of URLs; requests' own session headers, not a client patch) is accepted.
anon = consul.Consul(host=host, port=port)
try:
    anon.kv.put('py/denied', 'x')
    raise AssertionError('anonymous kv.put was accepted')
except consul.ACLPermissionDenied:
    pass
by_header = consul.Consul(host=host, port=port)
by_header.http.session.headers['X-Consul-Token'] = token
expect(by_header.kv.put('py/by-header', 'h') is True, 'kv.put with X-Consul-Token')
index, entry = by_header.kv.get('py/by-header')
expect(entry['Value'] == b'h' and int(index) > 0, 'kv.get with X-Consul-Token: %r %r' % (index, entry))
ok('acl token: ?token= and X-Consul-Token accepted, none refused')

# python-consul 0.7.1 passes its token only on some calls (kv, catalog, health, agent), never on
# session ones; against Consul, too, the header is how those calls carry a token. So the main
# client also sends it as X-Consul-Token from here on.
c.http.session.headers['X-Consul-Token'] = token

# Register: through the catalog and through the agent.
expect(c.catalog.register('py-node', '10.1.0.1',
                          service={'Service': 'pyweb', 'ID': 'pyweb-1', 'Port': 8080, 'Tags': ['v1']},
                          check={'CheckID': 'pyweb-alive', 'Name': 'alive', 'ServiceID': 'pyweb-1', 'Status': 'passing'}) is True,
       'catalog.register')
expect(c.catalog.register('py-node-2', '10.1.0.2',
                          service={'Service': 'pyweb', 'ID': 'pyweb-2', 'Port': 8081},
                          check={'CheckID': 'pyweb-alive', 'Name': 'alive', 'ServiceID': 'pyweb-2', 'Status': 'critical'}) is True,
       'catalog.register (critical)')
expect(c.agent.service.register('pyagent', service_id='pyagent-1', port=9000) is True, 'agent.service.register')
index, nodes = c.catalog.nodes()
names = sorted(n['Node'] for n in nodes)
expect('py-node' in names and 'py-node-2' in names and int(index) > 0, 'catalog.nodes %r' % names)
index, services = c.catalog.services()
expect('pyweb' in services and 'pyagent' in services, 'catalog.services %r' % services)
index, instances = c.catalog.service('pyweb', tag='v1')
expect([s['ServiceID'] for s in instances] == ['pyweb-1'], 'catalog.service tag %r' % instances)
ok('register (catalog and agent) and catalog reads')

# Health.
index, all_web = c.health.service('pyweb')
index, passing = c.health.service('pyweb', passing=True)
expect(len(all_web) == 2, 'health.service %r' % all_web)
expect([e['Service']['ID'] for e in passing] == ['pyweb-1'], 'health.service passing %r' % passing)
index, agent_svc = c.health.service('pyagent', passing=True)
expect(len(agent_svc) == 1, 'health.service of the agent service %r' % agent_svc)
index, critical = c.health.state('critical')
expect(any(ch['CheckID'] == 'pyweb-alive' and ch['Node'] == 'py-node-2' for ch in critical), 'health.state critical')
index, checks = c.health.node('py-node')
expect(any(ch['CheckID'] == 'pyweb-alive' for ch in checks), 'health.node')
ok('health service/passing/state/node')

# KV get/put/CAS.
expect(c.kv.put('py/key', 'one') is True, 'kv.put')
index, entry = c.kv.get('py/key')
expect(entry['Value'] == b'one', 'kv.get %r' % entry)
modify = entry['ModifyIndex']
expect(c.kv.put('py/key', 'stale', cas=modify - 1) is False, 'kv.put with a stale cas')
expect(c.kv.put('py/key', 'two', cas=modify) is True, 'kv.put with the current cas')
expect(c.kv.put('py/new', 'x', cas=0) is True, 'kv.put cas=0 creates')
expect(c.kv.put('py/new', 'y', cas=0) is False, 'kv.put cas=0 on an existing key')
index, entry = c.kv.get('py/key')
expect(entry['Value'] == b'two', 'kv.get after cas %r' % entry)
index, keys = c.kv.get('py/', keys=True)
expect(keys == ['py/by-header', 'py/key', 'py/new'], 'kv.get keys %r' % keys)
index, missing = c.kv.get('py/absent')
expect(missing is None and int(index) > 0, 'kv.get of a missing key %r %r' % (index, missing))
expect(c.kv.delete('py/new') is True, 'kv.delete')
ok('kv get/put/cas/keys/delete')

# Session lock acquire/release, a second session refused while held.
a = c.session.create(name='py-a', lock_delay=0, behavior='release', ttl=30)
b = c.session.create(name='py-b', lock_delay=0)
expect(c.kv.put('py/lock', 'a', acquire=a) is True, 'acquire by a')
expect(c.kv.put('py/lock', 'b', acquire=b) is False, 'acquire by b while a holds it')
index, held = c.kv.get('py/lock')
expect(held['Session'] == a and held['LockIndex'] == 1, 'held %r' % held)
index, info = c.session.info(a)
expect(info['ID'] == a and info['Name'] == 'py-a', 'session.info %r' % info)
index, on_node = c.session.node(info['Node'])
expect(a in [s['ID'] for s in on_node], 'session.node')
expect(c.kv.put('py/lock', 'a', release=a) is True, 'release by a')
index, released = c.kv.get('py/lock')
expect('Session' not in released, 'released %r' % released)
expect(c.kv.put('py/lock', 'b', acquire=b) is True, 'acquire by b after the release')
renewed = c.session.renew(a)
expect(renewed['ID'] == a, 'session.renew %r' % renewed)
expect(c.session.destroy(a) is True and c.session.destroy(b) is True, 'session.destroy')
index, after = c.kv.get('py/lock')
expect('Session' not in after, 'destroying the holder releases the lock %r' % after)
ok('session lock acquire/release')

# A blocking watch: a read with the index wakes when the key changes (here written through another
# server), and returns the new index; a read with nothing written waits out `wait`.
index, entry = c.kv.get('py/watched')
expect(entry is None, 'watched key starts absent')
other = consul.Consul(host=host, port=other_port, token=token)
other.http.session.headers['X-Consul-Token'] = token


def write_later():
    time.sleep(0.4)
    other.kv.put('py/watched', 'changed')


writer = threading.Thread(target=write_later)
started = time.time()
writer.start()
new_index, entry = c.kv.get('py/watched', index=index, wait='10s')
took = time.time() - started
writer.join()
expect(entry is not None and entry['Value'] == b'changed', 'woken with the value %r' % entry)
expect(int(new_index) > int(index), 'new index %r > %r' % (new_index, index))
expect(0.3 <= took < 8, 'woke after %.2fs' % took)
started = time.time()
same_index, entry = c.kv.get('py/watched', index=new_index, wait='500ms')
took = time.time() - started
expect(same_index == new_index and took >= 0.45, 'quiet wait returned index %r after %.2fs' % (same_index, took))

# The same on a health watch: blocked on health.service(passing) until an instance starts passing.
index, passing = c.health.service('pyweb', passing=True)


def pass_later():
    time.sleep(0.4)
    other.catalog.register('py-node-2', '10.1.0.2', service={'Service': 'pyweb', 'ID': 'pyweb-2', 'Port': 8081},
                           check={'CheckID': 'pyweb-alive', 'Name': 'alive', 'ServiceID': 'pyweb-2', 'Status': 'passing'})


writer = threading.Thread(target=pass_later)
writer.start()
new_index, passing_now = c.health.service('pyweb', passing=True, index=index, wait='10s')
writer.join()
expect(len(passing_now) == 2 and int(new_index) > int(index), 'health watch woke with %r' % passing_now)
ok('blocking watch (kv and health) wakes on change')

# Metadata python-consul does not expose: KnownLeader and LastContact under the Consul names.
r = requests.get('http://%s:%d/v1/kv/py/key' % (host, port), params={'token': token})
expect(r.headers.get('X-Consul-KnownLeader') == 'true' and r.headers.get('X-Consul-LastContact') is not None,
       'X-Consul-KnownLeader/LastContact %r' % dict(r.headers))
ok('consul header names on responses')
print('all ok', flush=True)
