"""stable-baselines3's own training entry point, `PPO.learn`, with a tiny configuration on
CartPole. The library picks its device itself (`device="auto"`)."""

from stable_baselines3 import PPO

model = PPO("MlpPolicy", "CartPole-v1", n_steps=64, batch_size=32, n_epochs=2, learning_rate=3e-3, seed=0, verbose=0)
model.learn(total_timesteps=256)
