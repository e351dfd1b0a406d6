import { lazy, type ComponentType } from 'react';

/**
 * A component loaded on demand that renders at once when its module is already here. React.lazy
 * suspends on its first render even then, and React reveals suspended content in steps of about
 * 300 ms; a page whose code was fetched ahead (`preload`) should not wait for that.
 */
export function lazyComponent<P extends object>(load: () => Promise<{ default: ComponentType<P> }>) {
  let loaded: ComponentType<P> | undefined;
  let loading: Promise<{ default: ComponentType<P> }> | undefined;
  const preload = () =>
    (loading ??= load().then((m) => {
      loaded = m.default;
      return m;
    }));
  const Lazy = lazy(preload);
  function OnDemand(props: P) {
    const Loaded = loaded;
    return Loaded ? <Loaded {...props} /> : <Lazy {...props} />;
  }
  return Object.assign(OnDemand, { preload });
}
