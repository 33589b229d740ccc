import { defineConfig } from 'vite';
import { tandem } from 'tandem/vite';

// tandem(): cross-origin isolation for `vite` and `vite preview`, ES-module workers, and Tandem
// kept out of dependency pre-bundling.
export default defineConfig({ plugins: [tandem()] });
