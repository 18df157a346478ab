package contracts

import (
	"context"
	"errors"
	"fmt"

	"github.com/ethereum/go-ethereum/accounts/abi/bind/v2"
	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/rpc"
)

// ErrForeignERC8004 reports a deployment whose ERC-8004 reputation or validation registry is
// bound to another identity registry than the one it names: agent ids would mean other agents.
var ErrForeignERC8004 = errors.New("contracts: ERC-8004 registry bound to another identity registry")

// checkERC8004 verifies that the deployment's reputation and validation registries are bound
// to its identity registry (Deployment.Check).
func (d *Deployment) checkERC8004(ctx context.Context, b Backend) error {
	opts := &bind.CallOpts{Context: ctx}
	rep, val := NewReputationRegistry(), NewValidationRegistry()
	for _, c := range []struct {
		name string
		call func() (common.Address, error)
	}{
		{"ReputationRegistry", func() (common.Address, error) {
			return bind.Call(rep.Instance(b, d.Contracts.ReputationRegistry), opts, rep.PackGetIdentityRegistry(), rep.UnpackGetIdentityRegistry)
		}},
		{"ValidationRegistry", func() (common.Address, error) {
			return bind.Call(val.Instance(b, d.Contracts.ValidationRegistry), opts, val.PackGetIdentityRegistry(), val.UnpackGetIdentityRegistry)
		}},
	} {
		id, err := c.call()
		var answered rpc.Error
		if errors.As(err, &answered) && answered.ErrorCode() == 3 { // execution reverted: no such function there
			return fmt.Errorf("%w: %s at %s is no ERC-8004 registry (getIdentityRegistry reverts)", ErrForeignERC8004, c.name, d.Contracts.IdentityRegistry)
		}
		if err != nil {
			return fmt.Errorf("check deployment: %s.getIdentityRegistry: %w", c.name, err)
		}
		if id != d.Contracts.IdentityRegistry {
			return fmt.Errorf("%w: %s serves %s, the file names IdentityRegistry %s", ErrForeignERC8004, c.name, id, d.Contracts.IdentityRegistry)
		}
	}
	return nil
}

// deployERC8004 puts the three ERC-8004 registries on the chain with create (DeployFrom's):
// the IdentityRegistry first, then the Reputation and Validation registries, each bound to
// it at construction. They have no owner and no parameters: anyone registers agents and gives
// feedback, as the standard says.
func deployERC8004(d *Deployment, create func(name string, meta *bind.MetaData, input []byte) (common.Address, error)) error {
	var err error
	if d.Contracts.IdentityRegistry, err = create("IdentityRegistry", &IdentityRegistryMetaData, nil); err != nil {
		return err
	}
	if d.Contracts.ReputationRegistry, err = create("ReputationRegistry", &ReputationRegistryMetaData,
		NewReputationRegistry().PackConstructor(d.Contracts.IdentityRegistry)); err != nil {
		return err
	}
	d.Contracts.ValidationRegistry, err = create("ValidationRegistry", &ValidationRegistryMetaData,
		NewValidationRegistry().PackConstructor(d.Contracts.IdentityRegistry))
	return err
}
