import { useEffect, useRef, type ReactNode } from 'react';
import { useI18n } from '../i18n/i18n';

/**
 * A modal dialog: labelled, Escape closes it, focus moves in and returns to where it was. `drawer`
 * slides it in at the right edge, full height (a side panel over a page that stays in view).
 */
export function Modal({
  title,
  onClose,
  children,
  wide,
  drawer,
}: {
  title: string;
  onClose: () => void;
  children: ReactNode;
  wide?: boolean;
  drawer?: boolean;
}) {
  const { t } = useI18n();
  const box = useRef<HTMLDivElement>(null);
  // The latest onClose, so a parent passing a new function on each render does not move focus.
  const close = useRef(onClose);
  useEffect(() => {
    close.current = onClose;
  });
  useEffect(() => {
    const before = document.activeElement as HTMLElement | null;
    const first = box.current?.querySelector<HTMLElement>(
      'input, textarea, select, button:not(.modal-close)',
    );
    (first ?? box.current)?.focus();
    const onKey = (e: KeyboardEvent) => {
      if (e.key !== 'Escape') return;
      // A dialog opened from a dialog: Escape closes only the top one.
      const open = document.querySelectorAll('.modal');
      if (open[open.length - 1] === box.current) close.current();
    };
    document.addEventListener('keydown', onKey);
    return () => {
      document.removeEventListener('keydown', onKey);
      before?.focus?.();
    };
  }, []);
  return (
    <div
      className={`modal-backdrop${drawer ? ' drawer-backdrop' : ''}`}
      onMouseDown={(e) => e.target === e.currentTarget && onClose()}
    >
      <div
        className={`modal ${wide ? 'wide' : ''}${drawer ? ' drawer' : ''}`}
        role="dialog"
        aria-modal="true"
        aria-label={title}
        ref={box}
        tabIndex={-1}
      >
        <header>
          <h2>{title}</h2>
          <button type="button" className="modal-close" aria-label={t('common.close')} onClick={onClose}>
            ×
          </button>
        </header>
        {children}
      </div>
    </div>
  );
}
