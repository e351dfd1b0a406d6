import { NavLink } from 'react-router';

/** The tabs of a page with sub-pages: real links, so every tab has a URL people can share. */
export function SubNav({
  label,
  items,
}: {
  label: string;
  items: readonly { to: string; label: string; end?: boolean }[];
}) {
  return (
    <nav className="tabs subnav" aria-label={label}>
      {items.map((item) => (
        <NavLink
          key={item.to}
          to={item.to}
          end={item.end ?? false}
          className={({ isActive }) => `button${isActive ? ' active' : ''}`}
        >
          {item.label}
        </NavLink>
      ))}
    </nav>
  );
}
