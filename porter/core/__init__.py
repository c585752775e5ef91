"""What every layer shares: findings and results, reading files safely, suppression comments,
file kinds, and text made safe to print. Imports nothing of porter."""
