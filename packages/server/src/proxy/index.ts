// The built-in Connect proxy (`registry connect proxy`, and managed proxies with no Command).
export { runProxy, type ProxyOptions, type RunningProxy } from './run-proxy';
export { upstreamFlag } from './proxy-config';
